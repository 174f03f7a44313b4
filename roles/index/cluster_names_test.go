package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/roles/index/replication"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/rendezvous"
)

// nameRanked returns a name whose rendezvous ranking over ids is ids.
func nameRanked(t *testing.T, ids ...string) string {
	t.Helper()
	cands := make([]rendezvous.Candidate, len(ids))
	for i, id := range ids {
		cands[i] = rendezvous.Candidate{ID: id}
	}
	for i := range 100000 {
		n := fmt.Sprintf("n%d.example", i)
		if slices.Equal(rendezvous.IDs(rendezvous.Rank(cands, ownership.NameKey(n))), ids) {
			return n
		}
	}
	t.Fatalf("no name ranks %v", ids)
	return ""
}

// record decodes a name record answer.
func record(t *testing.T, body string) indexapi.NameRecord {
	t.Helper()
	var r indexapi.NameRecord
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("record %q: %v", body, err)
	}
	return r
}

// TestClusterWriteThroughNonOwner: a write received by a non-owner goes to
// the primary (node-b for blog.example over node-a…d), lands on the three
// owners only, and every node reads it.
func TestClusterWriteThroughNonOwner(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b", "node-c", "node-d")
	code, body := ct.put("node-a", "blog.example", idA, nil)
	if code != 200 || record(t, body).Version != 1 {
		t.Fatalf("PUT via node-a: %d %s", code, body)
	}
	if ct.nodes["node-b"].count("PUT /names/blog.example") != 1 {
		t.Fatal("the write did not reach the primary node-b")
	}
	if _, err := ct.local("node-a", "blog.example"); !errors.Is(err, indexdb.ErrNotFound) {
		t.Fatalf("non-owner node-a stored the name: %v", err)
	}
	for _, id := range []string{"node-b", "node-c", "node-d"} {
		if rec, err := ct.local(id, "blog.example"); err != nil || rec.Version != 1 || rec.Target.String() != idA {
			t.Fatalf("owner %s: %+v %v", id, rec, err)
		}
	}
	for _, id := range ct.ids {
		code, hdr, body := ct.do(id, "GET", "/names/blog.example", "", "", nil)
		if code != 200 || record(t, body).B3 != idA || hdr.Get("ETag") != `"1"` {
			t.Fatalf("GET on %s: %d %s", id, code, body)
		}
	}
	code, _, body = ct.do("node-a", "GET", "/resolve/blog.example", "", "", nil)
	if code != 200 || !strings.Contains(body, `"source":"peer"`) || !strings.Contains(body, `"name_version":1`) {
		t.Fatalf("resolve on the non-owner: %d %s", code, body)
	}
	if v := ct.metric("node-b", `ron_index_owner_writes_total{role="index",kind="name",result="ok"}`); v != 1 {
		t.Fatalf("owner writes on the primary: %v", v)
	}

	code, _, body = ct.do("node-a", "GET", "/names/blog.example/versions", "", "", nil)
	if code != 200 || !strings.Contains(body, `"versions":[{"version":1`) {
		t.Fatalf("history on the non-owner: %d %s", code, body)
	}
	if code, _, body = ct.do("node-a", "GET", "/names/blog.example/versions?local=1", "", "", nil); code != 404 {
		t.Fatalf("local history on the non-owner: %d %s", code, body)
	}
	if h, err := NewLocalClient(ct.nodes["node-a"].h).History(context.Background(), "blog.example"); err != nil || len(h.Versions) != 1 {
		t.Fatalf("LocalClient.History: %+v %v", h, err)
	}

	// A precondition failure comes back from the primary unchanged.
	code, hdr, body := ct.do("node-a", "PUT", "/names/blog.example", `{"b3":"`+idB+`"}`, ct.writer,
		map[string]string{"If-Match": `"7"`})
	if code != 412 || !strings.Contains(body, `"current_version":1`) || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("412 relay: %d %s", code, body)
	}
	code, _, body = ct.do("node-c", "DELETE", "/names/blog.example", "", ct.writer, map[string]string{"If-Match": `"1"`})
	if code != 200 || !strings.Contains(body, `"deleted":true`) || !strings.Contains(body, `"version":2`) {
		t.Fatalf("DELETE via node-c: %d %s", code, body)
	}
	for _, id := range ct.ids {
		if code, _, body := ct.do(id, "GET", "/names/blog.example", "", "", nil); code != 404 {
			t.Fatalf("GET after delete on %s: %d %s", id, code, body)
		}
	}
}

// TestClusterLocalClientForwards: in-process writes (LocalClient) take the
// same path, and the relayed answer decodes into records and envelopes.
func TestClusterLocalClientForwards(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b", "node-c", "node-d")
	lc := NewLocalClient(ct.nodes["node-a"].h)
	ctx := context.Background()
	rec, err := lc.SetName(ctx, "blog.example", mustID(t, idA), indexapi.IfAbsent())
	if err != nil || rec.Version != 1 || rec.B3 != idA || rec.Name != "blog.example" {
		t.Fatalf("SetName: %+v %v", rec, err)
	}
	_, err = lc.SetName(ctx, "blog.example", mustID(t, idB), indexapi.IfAbsent())
	if he := httpx.AsError(err); he.Status != 412 || he.Details["current_version"] != float64(1) {
		t.Fatalf("create-only on a live name: %v", err)
	}
	got, err := lc.GetName(ctx, "blog.example")
	if err != nil || got.Version != 1 {
		t.Fatalf("GetName: %+v %v", got, err)
	}
	del, err := lc.DeleteName(ctx, "blog.example", indexapi.IfMatch(1))
	if err != nil || !del.Deleted || del.Version != 2 {
		t.Fatalf("DeleteName: %+v %v", del, err)
	}
	if _, err := lc.DeleteName(ctx, "blog.example", indexapi.Cond{}); httpx.AsError(err).Status != 404 {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := lc.SetName(ctx, "Bad_Name", mustID(t, idA), indexapi.Cond{}); httpx.AsError(err).Status != 400 {
		t.Fatalf("bad name: %v", err)
	}
}

// TestClusterForwardedOnce: a forwarded write is applied by its receiver
// even when the receiver's View names another primary, so a write is never
// forwarded twice; X-Ron-Forwarded counts only with index:replicate or
// admin, otherwise the header is ignored and the request forwarded.
func TestClusterForwardedOnce(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b")
	name := nameRanked(t, "node-c", "node-b", "node-a")
	// node-b believes in a node-c, served by node-a's listener, that
	// outranks it; node-a sees only node-a and node-b.
	ms := ct.members(nil)
	ms = append(ms, cluster.Member{ID: "node-c", Roles: []string{roleName}, State: cluster.StateAlive,
		URLs: map[string]string{roleName: ct.nodes["node-a"].ts.URL}})
	ct.nodes["node-b"].mem.Set(cluster.NewView("node-b", ms, ms[0].Since))
	a, b := ct.nodes["node-a"], ct.nodes["node-b"]
	path := "PUT /names/" + name

	if code, body := ct.put("node-a", name, idA, nil); code != 200 {
		t.Fatalf("PUT via node-a: %d %s", code, body)
	}
	if a.count(path) != 1 || b.count(path) != 1 {
		t.Fatalf("PUTs served: node-a %d, node-b %d; want 1 and 1", a.count(path), b.count(path))
	}
	if rec, err := ct.local("node-b", name); err != nil || rec.Version != 1 {
		t.Fatalf("node-b did not apply the forwarded write: %+v %v", rec, err)
	}

	cases := []struct {
		token     string
		forwarded bool // node-b passes it on to its primary (node-a's listener)
	}{
		{ct.writer, true},
		{ct.token("index:admin"), true},
		{ct.token(indexapi.ScopeWrite, indexapi.ScopeReplicate), false},
		{ct.token("admin"), false},
	}
	for i, tc := range cases {
		before := a.count(path)
		code, _, body := ct.do("node-b", "PUT", "/names/"+name, `{"b3":"`+idB+`"}`, tc.token,
			map[string]string{replication.HeaderForwarded: "node-x"})
		if code != 200 || record(t, body).Version != uint64(i+2) {
			t.Fatalf("case %d: %d %s", i, code, body)
		}
		if got := a.count(path) - before; (got == 1) != tc.forwarded {
			t.Fatalf("case %d: node-a served %d forwarded PUTs, forwarded=%v", i, got, tc.forwarded)
		}
	}
}

// TestClusterQuorum: with three members, one unreachable owner still
// leaves two copies; with two members dead the survivor refuses writes
// (nothing is committed) and still answers reads.
func TestClusterQuorum(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b", "node-c")
	if code, body := ct.put("node-a", "blog.example", idA, nil); code != 200 {
		t.Fatalf("PUT: %d %s", code, body)
	}
	// node-c is down but gossip has not noticed yet: 2 copies are enough.
	ct.nodes["node-c"].down.Store(true)
	if code, body := ct.put("node-a", "blog.example", idB, nil); code != 200 || record(t, body).Version != 2 {
		t.Fatalf("PUT with node-c unreachable: %d %s", code, body)
	}
	if v := ct.metric("node-b", `ron_index_owner_writes_total{role="index",kind="name",result="ok"}`); v != 2 {
		t.Fatalf("owner writes ok: %v", v)
	}
	// node-c is dead: ownership moves to the two alive members at once.
	ct.setViews(map[string]cluster.State{"node-c": cluster.StateDead})
	if code, body := ct.put("node-a", "blog.example", idA, nil); code != 200 || record(t, body).Version != 3 {
		t.Fatalf("PUT with node-c dead: %d %s", code, body)
	}
	// node-b dies too: the lone survivor refuses writes.
	ct.nodes["node-b"].down.Store(true)
	ct.setViews(map[string]cluster.State{"node-b": cluster.StateDead, "node-c": cluster.StateDead})
	code, hdr, body := ct.do("node-a", "PUT", "/names/blog.example", `{"b3":"`+idB+`"}`, ct.writer, nil)
	if code != 503 || errorCode([]byte(body)) != httpx.CodeUpstreamUnavailable || hdr.Get("Retry-After") == "" ||
		!strings.Contains(body, `"required":2`) {
		t.Fatalf("PUT on the survivor: %d %s", code, body)
	}
	if rec, _ := ct.local("node-a", "blog.example"); rec.Version != 3 {
		t.Fatalf("the refused write was committed: %+v", rec)
	}
	if v := ct.metric("node-a", `ron_index_owner_writes_total{role="index",kind="name",result="failed"}`); v != 1 {
		t.Fatalf("owner writes failed: %v", v)
	}
	for _, path := range []string{"/names/blog.example", "/resolve/blog.example", "/names/blog.example@2"} {
		if code, _, body := ct.do("node-a", "GET", path, "", "", nil); code != 200 || !strings.Contains(body, "blog.example") {
			t.Fatalf("GET %s on the survivor: %d %s", path, code, body)
		}
	}
	if code, _, body := ct.do("node-a", "GET", "/names/other.example", "", "", nil); code != 404 {
		t.Fatalf("unknown name on the survivor: %d %s", code, body)
	}
}

// TestClusterPrimaryUnreachable: a forward to a primary that does not
// answer is a 503 upstream_unavailable with Retry-After (docs/cluster.md
// §6), never a local write.
func TestClusterPrimaryUnreachable(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b", "node-c", "node-d")
	ct.nodes["node-b"].down.Store(true)
	code, hdr, body := ct.do("node-a", "PUT", "/names/blog.example", `{"b3":"`+idA+`"}`, ct.writer, nil)
	if code != 503 || errorCode([]byte(body)) != httpx.CodeUpstreamUnavailable || hdr.Get("Retry-After") == "" {
		t.Fatalf("PUT with the primary down: %d %s", code, body)
	}
	if _, err := ct.nodes["node-a"].h.doSet(context.Background(), "blog.example", mustID(t, idA), indexapi.Cond{}); httpx.AsError(err).Status != 503 {
		t.Fatalf("LocalClient write with the primary down: %v", err)
	}
	for _, id := range ct.ids {
		if _, err := ct.local(id, "blog.example"); !errors.Is(err, indexdb.ErrNotFound) {
			t.Fatalf("%s stored the name: %v", id, err)
		}
	}
}
