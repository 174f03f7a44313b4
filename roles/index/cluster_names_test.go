package index

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/replication"
	"github.com/ronhq/ron/runtime/consensus/consensustest"
)

// record decodes a name record answer.
func record(t *testing.T, body string) indexapi.NameRecord {
	t.Helper()
	var r indexapi.NameRecord
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("record %q: %v", body, err)
	}
	return r
}

// TestClusterNameWritesGoThroughTheLog: a write received by a follower is
// forwarded to the leader, acknowledged once the log committed it, and
// applied on every node, which then answers reads locally with its
// freshness; a verdict (412) comes back from the leader unchanged, and a
// delete through another node is a tombstone everywhere.
func TestClusterNameWritesGoThroughTheLog(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b", "node-c")
	leader, via := ct.leader(), ct.follower()
	code, body := ct.put(via, "blog.example", idA, nil)
	if code != 200 || record(t, body).Version != 1 {
		t.Fatalf("PUT via follower %s: %d %s", via, code, body)
	}
	if n := ct.nodes[leader].count("PUT /names/blog.example"); n != 1 {
		t.Fatalf("the leader served %d PUTs, want the one forwarded", n)
	}
	ct.waitApplied("blog.example", 1)
	for _, id := range ct.ids {
		code, hdr, body := ct.do(id, "GET", "/names/blog.example", "", "", nil)
		if code != 200 || record(t, body).B3 != idA || hdr.Get("ETag") != `"1"` {
			t.Fatalf("GET on %s: %d %s", id, code, body)
		}
		if applied, _ := strconv.ParseUint(hdr.Get(indexapi.HeaderAppliedIndex), 10, 64); applied < 1 ||
			hdr.Get(indexapi.HeaderKnownLeader) != "true" || hdr.Get(indexapi.HeaderLastContact) == "" {
			t.Fatalf("GET on %s: freshness headers %v", id, hdr)
		}
		code, _, body = ct.do(id, "GET", "/names/blog.example/versions", "", "", nil)
		if code != 200 || !strings.Contains(body, `"versions":[{"version":1`) {
			t.Fatalf("history on %s: %d %s", id, code, body)
		}
	}

	code, hdr, body := ct.do(via, "PUT", "/names/blog.example", `{"b3":"`+idB+`"}`, ct.writer,
		map[string]string{"If-Match": `"7"`})
	if code != 412 || !strings.Contains(body, `"current_version":1`) || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("412 relay: %d %s", code, body)
	}
	other := ct.ids[0]
	if other == via {
		other = ct.ids[1]
	}
	code, _, body = ct.do(other, "DELETE", "/names/blog.example", "", ct.writer, map[string]string{"If-Match": `"1"`})
	if code != 200 || !strings.Contains(body, `"deleted":true`) || !strings.Contains(body, `"version":2`) {
		t.Fatalf("DELETE via %s: %d %s", other, code, body)
	}
	ct.waitApplied("blog.example", 2)
	for _, id := range ct.ids {
		if code, _, body := ct.do(id, "GET", "/names/blog.example", "", "", nil); code != 404 || !strings.Contains(body, `"reason":"deleted"`) {
			t.Fatalf("GET after delete on %s: %d %s", id, code, body)
		}
	}
}

// TestClusterLocalClientForwards: in-process writes on a follower
// (LocalClient) take the same path, and the relayed answer decodes into
// records and envelopes.
func TestClusterLocalClientForwards(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b", "node-c")
	lc := NewLocalClient(ct.nodes[ct.follower()].h)
	ctx := context.Background()
	rec, err := lc.SetName(ctx, "blog.example", mustID(t, idA), indexapi.IfAbsent())
	if err != nil || rec.Version != 1 || rec.B3 != idA || rec.Name != "blog.example" {
		t.Fatalf("SetName: %+v %v", rec, err)
	}
	_, err = lc.SetName(ctx, "blog.example", mustID(t, idB), indexapi.IfAbsent())
	if he := httpx.AsError(err); he.Status != 412 || he.Details["current_version"] != float64(1) {
		t.Fatalf("create-only on a live name: %v", err)
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

// TestClusterForwardedOnce: a forwarded write that meets a node that is not
// the leader (leadership moved) is refused with 503 no_quorum, never
// forwarded again and never applied; X-Ron-Forwarded counts only with
// index:replicate or admin, otherwise the header is ignored and the write
// forwarded as any other.
func TestClusterForwardedOnce(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b", "node-c")
	leader, via := ct.leader(), ct.follower()
	path := "PUT /names/blog.example"
	cases := []struct {
		token     string
		forwarded bool // the header counts: the follower refuses instead of forwarding
	}{
		{ct.writer, false},
		{ct.token("index:admin"), false},
		{ct.token(indexapi.ScopeWrite, indexapi.ScopeReplicate), true},
		{ct.token("admin"), true},
	}
	version := uint64(0)
	for i, tc := range cases {
		before := ct.nodes[leader].count(path)
		code, hdr, body := ct.do(via, "PUT", "/names/blog.example", `{"b3":"`+idB+`"}`, tc.token,
			map[string]string{replication.HeaderForwarded: "node-x"})
		reached := ct.nodes[leader].count(path) - before
		if tc.forwarded {
			if code != 503 || errorCode([]byte(body)) != httpx.CodeNoQuorum || hdr.Get("Retry-After") == "" || reached != 0 ||
				!strings.Contains(body, `"outcome":"not_written"`) {
				t.Fatalf("case %d: %d %s, the leader served %d", i, code, body, reached)
			}
			continue
		}
		version++
		if code != 200 || record(t, body).Version != version || reached != 1 {
			t.Fatalf("case %d: %d %s, the leader served %d", i, code, body, reached)
		}
	}
	ct.waitApplied("blog.example", version)
}

// TestClusterNoQuorum: with two of three servers gone the last one never
// acknowledges a write (503 no_quorum with Retry-After, nothing applied,
// also through LocalClient) and refuses linearizable reads, while plain
// reads still answer locally and say no leader is known.
func TestClusterNoQuorum(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b", "node-c")
	if code, body := ct.put(ct.leader(), "blog.example", idA, nil); code != 200 {
		t.Fatalf("PUT: %d %s", code, body)
	}
	ct.waitApplied("blog.example", 1)
	last := ct.ids[0]
	for _, id := range ct.ids[1:] {
		consensustest.Detach(t, ct.nodes[id].plane)
	}
	consensustest.Eventually(t, "the last server to lose its leader", func() bool {
		return !ct.nodes[last].plane.Freshness().KnownLeader
	})
	code, hdr, body := ct.do(last, "PUT", "/names/blog.example", `{"b3":"`+idB+`"}`, ct.writer, nil)
	if code != 503 || errorCode([]byte(body)) != httpx.CodeNoQuorum || hdr.Get("Retry-After") == "" ||
		!strings.Contains(body, `"outcome":"not_written"`) {
		t.Fatalf("PUT without a quorum: %d %s", code, body)
	}
	if _, err := ct.nodes[last].h.doSet(context.Background(), "blog.example", mustID(t, idB), indexapi.Cond{}); httpx.AsError(err).Status != 503 {
		t.Fatalf("LocalClient write without a quorum: %v", err)
	}
	if rec, err := ct.local(last, "blog.example"); err != nil || rec.Version != 1 {
		t.Fatalf("a refused write was applied: %+v %v", rec, err)
	}
	code, hdr, body = ct.do(last, "GET", "/names/blog.example", "", "", nil)
	if code != 200 || record(t, body).Version != 1 || hdr.Get(indexapi.HeaderKnownLeader) != "false" {
		t.Fatalf("local read without a quorum: %d %s %v", code, body, hdr)
	}
	if code, _, body := ct.do(last, "GET", "/names/blog.example?consistent=1", "", "", nil); code != 503 ||
		errorCode([]byte(body)) != httpx.CodeNoQuorum {
		t.Fatalf("linearizable read without a quorum: %d %s", code, body)
	}
}

// TestClusterLeaderUnreachable: a write forwarded to a leader whose index
// takes the connection but does not answer is 503 no_quorum with
// Retry-After (its outcome unknown); one whose index refuses connections
// was never sent: the follower waits for another leader, and without one
// answers 503 no_quorum not_written. Never a local write.
func TestClusterLeaderUnreachable(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b", "node-c")
	leader, via := ct.leader(), ct.follower()
	ct.nodes[leader].down.Store(true)
	code, hdr, body := ct.do(via, "PUT", "/names/blog.example", `{"b3":"`+idA+`"}`, ct.writer, nil)
	if code != 503 || errorCode([]byte(body)) != httpx.CodeNoQuorum || hdr.Get("Retry-After") == "" ||
		!strings.Contains(body, "outcome is unknown") || !strings.Contains(body, `"outcome":"unknown"`) {
		t.Fatalf("PUT with the leader's index down: %d %s", code, body)
	}
	ct.nodes[leader].ts.Close()
	code, hdr, body = ct.do(via, "PUT", "/names/blog.example", `{"b3":"`+idA+`"}`, ct.writer, nil)
	if code != 503 || errorCode([]byte(body)) != httpx.CodeNoQuorum || hdr.Get("Retry-After") == "" ||
		!strings.Contains(body, `"outcome":"not_written"`) {
		t.Fatalf("PUT with the leader's index closed: %d %s", code, body)
	}
	for _, id := range ct.ids {
		if _, err := ct.local(id, "blog.example"); !errors.Is(err, indexdb.ErrNotFound) {
			t.Fatalf("%s stored the name: %v", id, err)
		}
	}
}

// TestClusterConsistentRead: ?consistent=1 on a follower is answered by the
// leader (after its barrier), so it sees every acknowledged write even
// when the follower has not applied it; on the leader it is answered
// there. A follower's cached answers are dropped as the log applies.
func TestClusterConsistentRead(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b", "node-c")
	leader, via := ct.leader(), ct.follower()
	if code, body := ct.put(leader, "blog.example", idA, nil); code != 200 {
		t.Fatalf("PUT: %d %s", code, body)
	}
	ct.waitApplied("blog.example", 1)
	if code, _, body := ct.do(via, "GET", "/resolve/blog.example", "", "", nil); code != 200 || !strings.Contains(body, `"name_version":1`) {
		t.Fatalf("resolve on %s: %d %s", via, code, body)
	}
	if code, body := ct.put(leader, "blog.example", idB, nil); code != 200 || record(t, body).Version != 2 {
		t.Fatalf("second PUT: %d %s", code, body)
	}
	before := ct.nodes[leader].count("GET /names/blog.example")
	code, _, body := ct.do(via, "GET", "/names/blog.example?consistent=1", "", "", nil)
	if code != 200 || record(t, body).Version != 2 || ct.nodes[leader].count("GET /names/blog.example") != before+1 {
		t.Fatalf("linearizable read on a follower: %d %s", code, body)
	}
	if code, _, body := ct.do(leader, "GET", "/names/blog.example/versions?consistent=1", "", "", nil); code != 200 ||
		!strings.Contains(body, `"versions":[{"version":2`) {
		t.Fatalf("linearizable history on the leader: %d %s", code, body)
	}
	ct.waitApplied("blog.example", 2)
	code, _, body = ct.do(via, "GET", "/resolve/blog.example", "", "", nil)
	if code != 200 || !strings.Contains(body, `"name_version":2`) {
		t.Fatalf("resolve on %s after the log applied version 2: %d %s", via, code, body)
	}
	if code, hdr, body := ct.do(via, "GET", "/names/blog.example", "", "", map[string]string{"Accept": "application/json"}); code != http.StatusOK ||
		hdr.Get(indexapi.HeaderLastContact) == "" {
		t.Fatalf("local read: %d %s", code, body)
	}
}
