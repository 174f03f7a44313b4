package gateway

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/topology"
	"github.com/ronhq/ron/store"
)

// clusterMember is an alive member running role at url in zone.
func clusterMember(id, zone, role, url string) cluster.Member {
	return cluster.Member{ID: id, Roles: []string{role}, URLs: map[string]string{role: url}, Zone: zone,
		State: cluster.StateAlive}
}

// clusterView is the table seen by the gateway node "gw" (zone z1).
func clusterView(ms ...cluster.Member) *cluster.View {
	self := cluster.Member{ID: "gw", Roles: []string{"gateway"}, Zone: "z1", State: cluster.StateAlive}
	return cluster.NewView("gw", append([]cluster.Member{self}, ms...), time.Time{})
}

// inCluster makes the gateway a cluster node of zone z1 reading m.
func inCluster(m cluster.Membership) func(*Options) {
	return func(o *Options) { o.Cluster, o.Node.Zone = m, "z1" }
}

// waitPool waits until cond holds for p, checking after each of p's syncs.
func waitPool[T any](t *testing.T, p *topology.Pool[T], what string, cond func([]topology.Entry[T]) bool) {
	t.Helper()
	for {
		synced := p.Synced()
		if cond(p.Entries()) {
			return
		}
		select {
		case <-synced:
		case <-time.After(testWait):
			t.Fatalf("%s: not within %s", what, testWait)
		}
	}
}

// TestClusterStorageMembers (docs/gateway.md §2): with neither a co-located
// nor a configured storage, /o goes to alive storage members, the
// gateway's zone first, one breaker each; a member that dies is retired
// and the next one serves.
func TestClusterStorageMembers(t *testing.T) {
	obj := object{data: blob(9, 3000), ctype: "text/plain"}
	near, far := newStub(serveObjects(false, obj)), newStub(serveObjects(false, obj))
	nearURL, farURL := near.listen(t), far.listen(t)
	st := cluster.NewStatic(clusterView(clusterMember("s-far", "z2", "storage", farURL),
		clusterMember("s-near", "z1", "storage", nearURL+"/")))
	h := startGateway(t, baseConfig(), Locals{}, inCluster(st))
	path := "/o/" + store.Sum(obj.data).String()
	for range 3 {
		a := h.do("GET", path, nil)
		if want(t, "GET via members", a, 200, ""); !bytes.Equal(a.body, obj.data) {
			t.Fatalf("body %q", a.body)
		}
	}
	if near.count() != 3 || far.count() != 0 {
		t.Fatalf("same zone first: near %d, far %d requests", near.count(), far.count())
	}
	if r := near.requests()[0]; !strings.HasPrefix(r.header.Get("Authorization"), "Bearer ") {
		t.Fatalf("member link without the minted token: %v", r.header)
	}
	br := h.r.Details().(map[string]any)["breakers"].(map[string]string)
	if br["storage@s-near"] != "closed" || br["storage@s-far"] != "closed" {
		t.Fatalf("breakers = %v, want one per member", br)
	}

	pool := h.r.ups.routes["storage"].Pool()
	st.Set(clusterView(clusterMember("s-far", "z2", "storage", farURL)))
	waitPool(t, pool, "s-near retired", func(es []topology.Entry[*policyLink]) bool { return len(es) == 1 })
	want(t, "GET after the near member died", h.do("GET", path, nil), 200, "")
	if near.count() != 3 || far.count() != 1 {
		t.Fatalf("after the change: near %d, far %d requests", near.count(), far.count())
	}
	if _, ok := h.r.Details().(map[string]any)["breakers"].(map[string]string)["storage@s-near"]; ok {
		t.Fatal("the dead member's link is still listed")
	}
}

// TestClusterUploadsSpread: a POST /o (id not known yet) ranks the storage
// members by its correlation id, so uploads spread over the members
// instead of all going to one coordinator.
func TestClusterUploadsSpread(t *testing.T) {
	created := func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"cid":"b3:00","size":1,"created":true}`)
	}
	a, b := newStub(created), newStub(created)
	st := cluster.NewStatic(clusterView(clusterMember("s-a", "", "storage", a.listen(t)),
		clusterMember("s-b", "", "storage", b.listen(t))))
	h := startGateway(t, baseConfig(), Locals{}, inCluster(st))
	for i := range 16 {
		want(t, "POST /o", h.do("POST", "/o", []byte("x"), "X-Corr-ID", fmt.Sprintf("upload-%02d", i), "Authorization", h.bearer("", "storage:write")), 201, "")
	}
	if a.count() == 0 || b.count() == 0 || a.count()+b.count() != 16 {
		t.Fatalf("uploads per member: s-a %d, s-b %d", a.count(), b.count())
	}
}

// TestClusterIndexMembers (docs/cluster.md §7): providers, names and resolve
// come from index members; a storage member's 404 sends the read on to
// the providers.
func TestClusterIndexMembers(t *testing.T) {
	obj := object{data: blob(4, 5000), ctype: "text/plain"}
	id := store.Sum(obj.data)
	_, provURL := newProvider(t, false, obj)
	storage := newStub(serveObjects(false))
	idx := newStub(serveIndex(map[store.ID][]string{id: {provURL}}, map[string]store.ID{"blog.example": id}))
	st := cluster.NewStatic(clusterView(clusterMember("s1", "z1", "storage", storage.listen(t)),
		clusterMember("i1", "z2", "index", idx.listen(t))))
	h := startGateway(t, baseConfig(), Locals{}, inCluster(st))
	a := h.do("GET", "/o/"+id.String(), nil)
	if want(t, "GET via providers", a, 200, ""); !bytes.Equal(a.body, obj.data) {
		t.Fatalf("body of %d bytes", len(a.body))
	}
	want(t, "resolve", h.do("GET", "/resolve/blog.example", nil), 200, "")
	paths := []string{}
	for _, r := range idx.requests() {
		paths = append(paths, r.path)
	}
	if !slices.Equal(paths, []string{"/providers/" + id.String(), "/resolve/blog.example"}) {
		t.Fatalf("index member got %v", paths)
	}
}

// TestClusterNoMembers: member-served upstreams without an alive member
// answer 502 no_upstream; edge routes exist (an edge may join later).
func TestClusterNoMembers(t *testing.T) {
	st := cluster.NewStatic(clusterView())
	h := startGateway(t, baseConfig(), Locals{}, inCluster(st))
	for _, p := range []string{"/edge/x", "/registry/head", "/names/blog.example"} {
		env := want(t, p, h.do("GET", p, nil), 502, "upstream_unavailable")
		if env.Error.Details["reason"] != "no_upstream" {
			t.Fatalf("%s: details %v", p, env.Error.Details)
		}
	}
	edge := newStub(nil)
	pool := h.r.ups.routes["edge"].Pool()
	st.Set(clusterView(clusterMember("e1", "", "edge", edge.listen(t))))
	waitPool(t, pool, "edge member", func(es []topology.Entry[*policyLink]) bool { return len(es) == 1 })
	want(t, "edge via member", h.do("GET", "/edge/tiles/x", nil), 200, "")
	if r := edge.requests(); len(r) != 1 || r[0].path != "/tiles/x" || r[0].header.Get("X-Forwarded-Prefix") != "/edge" {
		t.Fatalf("edge member got %+v", r)
	}
}

// TestClusterConfigAcceptance: in cluster mode a gateway needs neither a
// storage nor an index of its own; a URL key for a co-located role is
// still an error; outside a cluster the rule stands.
func TestClusterConfigAcceptance(t *testing.T) {
	none := func(string) bool { return false }
	storageHere := func(r string) bool { return r == "storage" }
	withStorageURL := baseConfig()
	withStorageURL.StorageURL = "http://127.0.0.1:1"
	cases := []struct {
		name    string
		cfg     Config
		here    func(string) bool
		cluster bool
		ok      bool
	}{
		{"cluster, no upstream", baseConfig(), none, true, true},
		{"no cluster, no upstream", baseConfig(), none, false, false},
		{"cluster, storage_url while co-located", withStorageURL, storageHere, true, false},
		{"cluster, storage_url", withStorageURL, none, true, true},
		{"no cluster, storage_url", withStorageURL, none, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			check := tc.cfg.CheckUpstreams
			if tc.cluster {
				check = tc.cfg.CheckClusterUpstreams
			}
			if err := check(tc.here); (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok %v", err, tc.ok)
			}
		})
	}
	r := New(Options{Config: baseConfig()})
	if err := r.Start(t.Context()); err == nil {
		t.Fatal("a gateway without upstreams outside a cluster must not start")
	}
}

// TestRegistryMembersWatchEndsWhenMemberLeaves: the watch follows the
// member that accepted it and closes once that member leaves, so the
// follower reconnects to an alive one; Head falls back past a failing
// member.
func TestRegistryMembersWatchEndsWhenMemberLeaves(t *testing.T) {
	stream := newStub(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.URL.Path == "/registry/head" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"version":7,"payload_b3":"b3:x","committed_at":"2025-01-01T00:00:00Z"}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	failing := newStub(status(503, "unavailable"))
	st := cluster.NewStatic(clusterView(clusterMember("r1", "z1", "registry", stream.listen(t)),
		clusterMember("r0", "z1", "registry", failing.listen(t))))
	pool := topology.NewPool(topology.PoolOptions[*registryapi.HTTPClient]{Membership: st, Role: "registry",
		Build: func(_, url string) (*registryapi.HTTPClient, error) {
			return registryapi.NewHTTPClient(url, nil, clientOpts()), nil
		},
		Retire: (*registryapi.HTTPClient).Close})
	rm := &registryMembers{pool: pool}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- pool.Run(ctx) }()
	if h, err := rm.Head(ctx); err != nil || h.Version != 7 {
		t.Fatalf("head = %+v, %v", h, err)
	}
	ch, err := rm.Watch(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	st.Set(clusterView(clusterMember("r0", "z1", "registry", "http://127.0.0.1:1")))
	select {
	case _, open := <-ch:
		if open {
			t.Fatal("an update from a stub that sends none")
		}
	case <-time.After(testWait):
		t.Fatal("the watch outlived its member")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// clientOpts are member client settings without retries (each failure
// goes to the next member at once).
func clientOpts() client.Options { return client.Options{Retries: -1} }
