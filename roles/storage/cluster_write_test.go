package storage

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/placement"
	"github.com/ronhq/ron/runtime/module"
	"github.com/ronhq/ron/store"
)

// Results of ron_storage_replica_copies_total.
const (
	copyOK       = "ok"
	copyExisting = "existing"
	copyFailed   = "failed"
)

// TestReplicatedWrite is the coordinator table over in-process members.
func TestReplicatedWrite(t *testing.T) {
	cases := []struct {
		name    string
		others  int
		rf      int
		put     bool                                  // PUT /o/{b3} instead of POST /o
		prepare func(tc *testCluster, order []string) // before the write
		status  int
		copies  int
		holders int // members (self included) holding the object after the write
		metrics map[string]float64
		puts    map[int]int64 // rank in order → PUTs that reached it
		bodyIn  int64         // body bytes the best-ranked member read
	}{
		{name: "success", others: 3, rf: 2, status: 201, copies: 2, holders: 2, bodyIn: int64(len(objectBody)),
			metrics: map[string]float64{copyOK: 1}, puts: map[int]int64{0: 1, 1: 0, 2: 0}},
		{name: "target already holds", others: 3, rf: 2, status: 201, copies: 2, holders: 2,
			prepare: func(tc *testCluster, order []string) { seed(t, tc.slots[order[0]].role.Role, objectBody) },
			metrics: map[string]float64{copyExisting: 1}, puts: map[int]int64{0: 1, 1: 0}},
		{name: "first target full", others: 3, rf: 2, status: 201, copies: 2, holders: 2,
			prepare: func(tc *testCluster, order []string) { tc.slots[order[0]].refuse(http.StatusInsufficientStorage) },
			metrics: map[string]float64{copyFailed: 1, copyOK: 1}, puts: map[int]int64{0: 1, 1: 1, 2: 0}},
		{name: "busy then unavailable", others: 3, rf: 2, status: 201, copies: 2, holders: 2,
			prepare: func(tc *testCluster, order []string) {
				tc.slots[order[0]].refuse(http.StatusTooManyRequests)
				tc.slots[order[1]].refuse(http.StatusServiceUnavailable)
			},
			metrics: map[string]float64{copyFailed: 2, copyOK: 1}, puts: map[int]int64{0: 1, 1: 1, 2: 1}},
		{name: "three targets fail", others: 4, rf: 2, status: 503, holders: 1,
			prepare: func(tc *testCluster, order []string) {
				for _, id := range order {
					tc.slots[id].refuse(http.StatusInternalServerError)
				}
			},
			metrics: map[string]float64{copyFailed: 3}, puts: map[int]int64{0: 1, 1: 1, 2: 1, 3: 0}},
		{name: "RF 1 makes no copy", others: 3, rf: 1, status: 201, copies: 1, holders: 1,
			metrics: map[string]float64{}, puts: map[int]int64{0: 0, 1: 0, 2: 0}},
		{name: "alone with RF 2", others: 2, rf: 2, status: 503, holders: 1,
			prepare: func(tc *testCluster, order []string) {
				tc.setView(map[string]cluster.State{"node-b": cluster.StateDead, "node-c": cluster.StateLeft})
			},
			metrics: map[string]float64{}, puts: map[int]int64{0: 0, 1: 0}},
		{name: "held here and by a target", others: 3, rf: 2, put: true, status: 200, copies: 2, holders: 2,
			prepare: func(tc *testCluster, order []string) {
				seed(t, tc.self.Role, objectBody)
				seed(t, tc.slots[order[0]].role.Role, objectBody)
			},
			metrics: map[string]float64{copyExisting: 1}, puts: map[int]int64{0: 0, 1: 0, 2: 0}},
		{name: "held here only", others: 3, rf: 2, put: true, status: 200, copies: 2, holders: 2, bodyIn: int64(len(objectBody)),
			prepare: func(tc *testCluster, order []string) { seed(t, tc.self.Role, objectBody) },
			metrics: map[string]float64{copyOK: 1}, puts: map[int]int64{0: 1, 1: 0, 2: 0}},
		{name: "held here, POST", others: 3, rf: 2, status: 200, copies: 2, holders: 2, bodyIn: int64(len(objectBody)),
			prepare: func(tc *testCluster, order []string) { seed(t, tc.self.Role, objectBody) },
			metrics: map[string]float64{copyOK: 1}, puts: map[int]int64{0: 1, 1: 0, 2: 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tc := startCluster(t, c.others, c.rf)
			id := store.Sum(objectBody)
			order := tc.order(id)
			if c.prepare != nil {
				c.prepare(tc, order)
			}
			resp, body := tc.write(objectBody, c.put, tc.self.token(storageapi.ScopeWrite), "Content-Type", "text/plain")
			checkWrite(t, tc, resp, body, c.status, c.copies)
			checkHolders(t, tc, id, c.holders)
			for rank, want := range c.puts {
				if got := tc.slots[order[rank]].puts.Load(); got != want {
					t.Errorf("member ranked %d (%s) got %d PUTs, want %d", rank, order[rank], got, want)
				}
			}
			if got := tc.slots[order[0]].role.metric(series("storage_bytes_in_total", "route", "/o/{b3}")); got != float64(c.bodyIn) {
				t.Errorf("best-ranked member read %v body bytes, want %d", got, c.bodyIn)
			}
			for _, res := range []string{copyOK, copyExisting, copyFailed} {
				if got := tc.self.metric(series("storage_replica_copies_total", "result", res)); got != c.metrics[res] {
					t.Errorf("copies_total{result=%s} = %v, want %v", res, got, c.metrics[res])
				}
			}
		})
	}
}

// objectBody is the object the coordinator tests write.
var objectBody = bytes.Repeat([]byte("replicated object "), 9000) // 162,000 bytes: three chunks

func checkWrite(t *testing.T, tc *testCluster, resp *http.Response, body []byte, status, want int) {
	t.Helper()
	if status == http.StatusServiceUnavailable {
		e := wantError(t, resp, body, status, httpx.CodeUpstreamUnavailable)
		if resp.Header.Get("Retry-After") != "2" || fmt.Sprint(e.Details) != "map[copies:1 required:2]" {
			t.Fatalf("Retry-After %q, details %v", resp.Header.Get("Retry-After"), e.Details)
		}
		return
	}
	if resp.StatusCode != status || copies(t, body) != want {
		t.Fatalf("%d %s, want %d with copies %d", resp.StatusCode, body, status, want)
	}
}

// checkHolders counts the members holding id; the local copy always stays.
func checkHolders(t *testing.T, tc *testCluster, id store.ID, want int) {
	t.Helper()
	if !engineHolds(t, tc.self.Role, id) {
		t.Fatal("the coordinator lost its local copy")
	}
	n := 1
	for _, s := range tc.slots {
		if s.holds(t, id) {
			n++
		}
	}
	if n != want {
		t.Fatalf("%d members hold the object, want %d", n, want)
	}
}

// TestReplicaHeader: X-Ron-Replica is honoured only with storage:replicate
// (or admin) and only in cluster mode; an honoured replica write is stored
// locally only, answers copies 1 and is announced.
func TestReplicaHeader(t *testing.T) {
	tc := startCluster(t, 2, 2)
	node := tc.self.token("storage:write", "storage:replicate")
	cases := []struct {
		name   string
		token  string
		copies int
		others int // other members holding the object afterwards
	}{
		{"write scope only", tc.self.token(storageapi.ScopeWrite), 2, 1},
		{"storage admin", tc.self.token(storageapi.ScopeAdmin), 2, 1},
		{"node token", node, 1, 0},
		{"admin", tc.self.token("admin"), 1, 0},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := []byte(fmt.Sprintf("replica header case %d", i))
			resp, b := tc.write(body, true, c.token, "X-Ron-Replica", "1")
			if resp.StatusCode != http.StatusCreated || copies(t, b) != c.copies {
				t.Fatalf("%d %s, want 201 copies %d", resp.StatusCode, b, c.copies)
			}
			id := store.Sum(body)
			n := 0
			for _, s := range tc.slots {
				if s.holds(t, id) {
					n++
				}
			}
			if n != c.others {
				t.Fatalf("%d other members hold it, want %d", n, c.others)
			}
			tc.self.sink.wait(t, func(rs []announcing.Record) bool {
				return slices.ContainsFunc(rs, func(r announcing.Record) bool { return r.ID == id && r.TTL > 0 })
			})
		})
	}
}

// TestReplicaHeaderClusterOff: a node without cluster mode ignores the
// header and keeps the single-node reply (no copies field).
func TestReplicaHeaderClusterOff(t *testing.T) {
	tr := startRole(t, func(c *Config) { c.Engine = "memory" })
	resp, body := tr.do(req{method: http.MethodPost, path: "/o", body: strings.NewReader("solo"),
		token: tr.token("admin"), header: []string{"X-Ron-Replica", "1"}})
	if resp.StatusCode != http.StatusCreated || copies(t, body) != -1 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if tr.peer != nil {
		t.Fatal("peer client built without cluster mode")
	}
}

// TestReplicaWriteNoCascade: the copy a coordinator pushes is stored by the
// target only, even though the target's own placement would copy it on.
func TestReplicaWriteNoCascade(t *testing.T) {
	tc := startCluster(t, 3, 2)
	id := store.Sum(objectBody)
	order := tc.order(id)
	resp, body := tc.write(objectBody, false, tc.self.token(storageapi.ScopeWrite))
	checkWrite(t, tc, resp, body, http.StatusCreated, 2)
	target := tc.slots[order[0]]
	if got := target.role.metric(series("storage_replica_copies_total", "result", copyOK)); got != 0 {
		t.Fatalf("the target copied on (%v copies)", got)
	}
	for _, id := range order[1:] {
		if s := tc.slots[id]; s.puts.Load() != 0 || s.has.Load() != 0 {
			t.Fatalf("%s was called: %d PUTs, %d has", id, s.puts.Load(), s.has.Load())
		}
	}
	target.role.sink.wait(t, func(rs []announcing.Record) bool {
		return slices.ContainsFunc(rs, func(r announcing.Record) bool { return r.ID == id && r.TTL > 0 })
	})
}

// TestCorruptLocalCopy: a local copy that fails its verified read during
// the synchronous copy answers 500 corrupt and is quarantined.
func TestCorruptLocalCopy(t *testing.T) {
	tc := startCluster(t, 2, 2)
	id := store.Sum(objectBody)
	seed(t, tc.self.Role, objectBody)
	flipByte(t, tc.self, id, store.ChunkSize+5) // the second chunk: detected mid-copy
	resp, body := tc.write(objectBody, true, tc.self.token(storageapi.ScopeWrite))
	wantError(t, resp, body, http.StatusInternalServerError, httpx.CodeCorrupt)
	if engineHolds(t, tc.self.Role, id) {
		t.Fatal("corrupt copy still served")
	}
	for _, s := range tc.slots {
		if s.holds(t, id) {
			t.Fatalf("%s stored a copy of a corrupt object", s.id)
		}
	}
}

// TestPlacement: targets are top(RF, W, x); holders are the members of L
// that answer with x, self included, sorted.
func TestPlacement(t *testing.T) {
	tc := startCluster(t, 3, 2)
	id := store.Sum(objectBody)
	seed(t, tc.self.Role, objectBody)
	ranked := tc.order(id)
	seed(t, tc.slots[ranked[0]].role.Role, objectBody)
	seed(t, tc.slots[ranked[2]].role.Role, objectBody)
	tc.setView(map[string]cluster.State{ranked[2]: cluster.StateDead}) // departed, still in L
	tc.slots[ranked[1]].refuse(http.StatusServiceUnavailable)          // does not answer
	targets, holders, err := tc.self.Placement(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	wantT := placement.IDs(placement.Top(2, placement.Writable(tc.views["node-a"].View()), id))
	if !slices.Equal(targets, wantT) || len(targets) != 2 {
		t.Fatalf("targets %v, want %v", targets, wantT)
	}
	wantH := []string{"node-a", ranked[0], ranked[2]}
	slices.Sort(wantH)
	if !slices.Equal(holders, wantH) {
		t.Fatalf("holders %v, want %v", holders, wantH)
	}
	off := startRole(t, func(c *Config) { c.Engine = "memory" })
	if _, _, err := off.Placement(context.Background(), id); httpx.AsError(err).Status != http.StatusNotFound {
		t.Fatalf("cluster off: %v", err)
	}
	// The admin listener serves before the roles start: no engine yet.
	unstarted := New(Options{Config: DefaultConfig(), Env: module.Env{Cluster: tc.views["node-a"]}})
	if _, _, err := unstarted.Placement(context.Background(), id); httpx.AsError(err).Status != http.StatusServiceUnavailable {
		t.Fatalf("before Start: %v", err)
	}
}
