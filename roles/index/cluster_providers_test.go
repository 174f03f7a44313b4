package index

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/rendezvous"
	"github.com/ronhq/ron/store"
)

// announceBody is a POST /providers body for ids held by node s1.
func announceBody(ids []store.ID) string {
	var recs []string
	for _, id := range ids {
		recs = append(recs, `{"b3":"`+id.String()+`","node":"s1","addr":"http://10.0.0.1:5303","ttl_s":600}`)
	}
	return `{"records":[` + strings.Join(recs, ",") + `]}`
}

// objects returns n distinct object ids.
func objects(n int) []store.ID {
	out := make([]store.ID, n)
	for i := range out {
		out[i] = store.Sum([]byte(fmt.Sprint("object ", i)))
	}
	return out
}

// holders returns which nodes store a provider record of id.
func (ct *ctest) holders(id store.ID) []string {
	var out []string
	for _, n := range ct.ids {
		ps, err := ct.nodes[n].db.Providers(context.Background(), id, "", 64)
		if err == nil && len(ps) > 0 {
			out = append(out, n)
		}
	}
	return out
}

// TestClusterProviders: a batch announced to any node lands on each
// record's owners only (in one /replica/providers call per owner), and
// every node finds the providers.
func TestClusterProviders(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b", "node-c", "node-d")
	ids := objects(12)
	code, _, body := ct.do("node-a", "POST", "/providers", announceBody(ids), ct.writer, nil)
	if code != 200 || !strings.Contains(body, `"accepted":12`) {
		t.Fatalf("announce: %d %s", code, body)
	}
	own := ct.nodes["node-a"].peers.Ownership()
	for _, id := range ids {
		want := rendezvous.IDs(cluster.Candidates(own.Owners(ownership.ObjectKey(id))))
		got := ct.holders(id)
		if len(got) != 3 || !sameSet(got, want) {
			t.Fatalf("%s held by %v, owners %v", id, got, want)
		}
		for _, n := range ct.ids {
			code, _, body := ct.do(n, "GET", "/providers/"+id.String(), "", "", nil)
			if code != 200 || !strings.Contains(body, `"node":"s1"`) {
				t.Fatalf("GET providers on %s: %d %s", n, code, body)
			}
		}
	}
	for _, n := range []string{"node-b", "node-c", "node-d"} {
		if c := ct.nodes[n].count("POST /replica/providers"); c != 1 {
			t.Fatalf("%s got %d replica calls", n, c)
		}
	}
	if v := ct.metric("node-a", `ron_index_owner_writes_total{role="index",kind="provider",result="ok"}`); v != 12 {
		t.Fatalf("owner writes: %v", v)
	}

	// In-process announces (a co-located storage) take the same path.
	more := objects(14)[12:]
	acc, wd, err := NewLocalClient(ct.nodes["node-b"].h).Announce(context.Background(), []indexapi.Announcement{
		{ID: more[0], Node: "s2", Addr: "http://10.0.0.2:5303", TTL: time.Minute},
		{ID: more[1], Node: "s2", Addr: "http://10.0.0.2:5303", TTL: 0},
	})
	if err != nil || acc != 1 || wd != 1 {
		t.Fatalf("local announce: %d %d %v", acc, wd, err)
	}
	if got := ct.holders(more[0]); len(got) != 3 {
		t.Fatalf("local announce held by %v", got)
	}
}

// TestClusterProvidersQuorum: records that reach fewer than W_idx owners
// make the batch 503 with details.failed naming them.
func TestClusterProvidersQuorum(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b", "node-c")
	ct.nodes["node-b"].down.Store(true)
	ids := objects(3)
	if code, _, body := ct.do("node-a", "POST", "/providers", announceBody(ids), ct.writer, nil); code != 200 {
		t.Fatalf("one owner unreachable: %d %s", code, body)
	}
	ct.nodes["node-c"].down.Store(true)
	code, hdr, body := ct.do("node-a", "POST", "/providers", announceBody(ids), ct.writer, nil)
	if code != 503 || errorCode([]byte(body)) != httpx.CodeUpstreamUnavailable || hdr.Get("Retry-After") == "" {
		t.Fatalf("two owners unreachable: %d %s", code, body)
	}
	var env struct {
		Error struct {
			Details struct {
				Failed   []int `json:"failed"`
				Required int   `json:"required"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &env); err != nil || len(env.Error.Details.Failed) != 3 ||
		env.Error.Details.Required != 2 {
		t.Fatalf("details %s", body)
	}
	// Reads still answer from the survivor's own copy.
	ct.setViews(map[string]cluster.State{"node-b": cluster.StateDead, "node-c": cluster.StateDead})
	if code, _, body := ct.do("node-a", "GET", "/providers/"+ids[0].String(), "", "", nil); code != 200 {
		t.Fatalf("read on the survivor: %d %s", code, body)
	}
	// A bad record fails the whole batch before anything is sent.
	bad := `{"records":[{"b3":"` + ids[0].String() + `","node":"a b","addr":"http://h"}]}`
	code, _, body = ct.do("node-a", "POST", "/providers", bad, ct.writer, nil)
	if code != 400 || !strings.Contains(body, `"field":"node"`) {
		t.Fatalf("bad record: %d %s", code, body)
	}
}

// sameSet reports whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// TestClusterProvidersLargeBatchFitsReplicas: a batch under the body cap
// whose types are full of HTML characters still reaches the other owners
// (the replica body is not HTML-escaped, which would grow it sixfold past
// httpx.JSONBodyCap).
func TestClusterProvidersLargeBatchFitsReplicas(t *testing.T) {
	ct := newCTest(t, 3, "node-a", "node-b")
	typ := strings.Repeat("<", 255)
	var recs []string
	for _, id := range objects(indexdb.MaxBatch) {
		recs = append(recs, `{"b3":"`+id.String()+`","node":"s1","addr":"http://10.0.0.1:5303","ttl_s":600,"type":"`+typ+`"}`)
	}
	body := `{"records":[` + strings.Join(recs, ",") + `]}`
	if len(body) > httpx.JSONBodyCap {
		t.Fatalf("test batch of %d bytes is over the cap", len(body))
	}
	code, _, out := ct.do("node-a", "POST", "/providers", body, ct.writer, nil)
	if code != 200 || !strings.Contains(out, fmt.Sprintf(`"accepted":%d`, indexdb.MaxBatch)) {
		t.Fatalf("announce: %d %.300s", code, out)
	}
	if got := ct.holders(objects(1)[0]); len(got) != 2 {
		t.Fatalf("held by %v, want both owners", got)
	}
}
