package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/storage/replicate"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/cluster/placement"
	"github.com/ronhq/ron/store"
)

var clusterT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// slot is one other storage member: an HTTP front whose handler is either
// its real storage role (in cluster mode) or a fake answer.
type slot struct {
	id   string
	role *testRole
	srv  *httptest.Server
	h    atomic.Pointer[http.Handler]
	puts atomic.Int64 // PUT /o/… requests that reached the front
	has  atomic.Int64 // POST /inventory/has requests that reached the front
}

func (s *slot) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPut:
		s.puts.Add(1)
	case r.URL.Path == "/inventory/has":
		s.has.Add(1)
	}
	(*s.h.Load()).ServeHTTP(w, r)
}

// set makes the front answer with h.
func (s *slot) set(h http.Handler) { s.h.Store(&h) }

// real makes the front serve the member's storage role again.
func (s *slot) real() { s.set(s.role.Handler()) }

// refuse makes the front answer every request with status, reading nothing.
func (s *slot) refuse(status int) {
	s.set(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteError(w, "", httpx.NewError(status, "refused", "test refusal"))
	}))
}

// holds reports whether the member's engine holds id.
func (s *slot) holds(t *testing.T, id store.ID) bool {
	t.Helper()
	return engineHolds(t, s.role.Role, id)
}

func engineHolds(t *testing.T, r *Role, id store.ID) bool {
	t.Helper()
	held, err := r.engine.Has(context.Background(), []store.ID{id})
	if err != nil {
		t.Fatal(err)
	}
	return held[0]
}

// testCluster is a coordinator ("node-a", a real role in cluster mode) and
// other members node-b… behind slots; every role shares one root key.
type testCluster struct {
	t     *testing.T
	keys  *auth.Keyring
	self  *testRole
	views map[string]*cluster.Static
	slots map[string]*slot
	ids   []string // every member id, self first
}

// startCluster starts self and others members with replication factor rf.
func startCluster(t *testing.T, others, rf int) *testCluster {
	t.Helper()
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	tc := &testCluster{t: t, keys: keys, views: map[string]*cluster.Static{}, slots: map[string]*slot{}}
	tc.self = tc.startMember("node-a", rf)
	tc.ids = []string{"node-a"}
	for i := range others {
		id := "node-" + string(rune('b'+i))
		s := &slot{id: id, role: tc.startMember(id, rf)}
		s.real()
		s.srv = httptest.NewServer(s)
		t.Cleanup(s.srv.Close)
		tc.slots[id] = s
		tc.ids = append(tc.ids, id)
	}
	tc.setView(nil)
	return tc
}

// startMember starts one storage role in cluster mode (memory engine).
func (tc *testCluster) startMember(id string, rf int) *testRole {
	ms := cluster.NewStatic(cluster.NewView(id, nil, clusterT0))
	tc.views[id] = ms
	tr := startRoleOpts(tc.t, func(c *Config) {
		if id != "node-a" { // the coordinator keeps the fs engine: its reads are real files
			c.Engine = "memory"
		}
		c.ReplicationFactor = rf
	}, func(o *Options) {
		o.Keys = tc.keys
		o.Cluster = ms
		o.ClusterConfig = cluster.DefaultConfig()
		o.Node.Token = auth.TokenSource(tc.keys, cluster.NodeScopes(false)...)
	})
	tr.keys = tc.keys
	return tr
}

// setView publishes the membership to every member; states overrides the
// state of some members (alive by default).
func (tc *testCluster) setView(states map[string]cluster.State) {
	var ms []cluster.Member
	for _, id := range tc.ids {
		url := tc.self.base
		if s := tc.slots[id]; s != nil {
			url = s.srv.URL
		}
		st := cluster.StateAlive
		if s, ok := states[id]; ok {
			st = s
		}
		ms = append(ms, cluster.Member{ID: id, Roles: []string{placement.Role}, URLs: map[string]string{placement.Role: url},
			State: st, Since: clusterT0})
	}
	for self, s := range tc.views {
		s.Set(cluster.NewView(self, ms, clusterT0))
	}
}

// order returns the sync copy candidates for id as the coordinator sees
// them (the top(RF, W, x) targets first).
func (tc *testCluster) order(id store.ID) []string {
	return placement.IDs(replicate.NewPlan(tc.views["node-a"].View(), tc.self.Cfg.Load().ReplicationFactor, id).Order)
}

// write sends body to the coordinator (POST /o, or PUT /o/{id} when put).
func (tc *testCluster) write(body []byte, put bool, token string, header ...string) (*http.Response, []byte) {
	q := req{method: http.MethodPost, path: "/o", body: bytes.NewReader(body), token: token, header: header}
	if put {
		q.method, q.path = http.MethodPut, "/o/"+store.Sum(body).String()
	}
	return tc.self.do(q)
}

// seed stores body in r's engine directly: no write path, no copies.
func seed(t *testing.T, r *Role, body []byte) {
	t.Helper()
	if _, _, err := r.engine.Put(context.Background(), bytes.NewReader(body), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

// reply decodes a write answer.
func reply(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("reply %q: %v", body, err)
	}
	return m
}

// copies is the "copies" field of a reply (-1 when absent).
func copies(t *testing.T, body []byte) int {
	t.Helper()
	v, ok := reply(t, body)["copies"]
	if !ok {
		return -1
	}
	return int(v.(float64))
}
