package index

import (
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/consensus"
	"github.com/ronhq/ron/runtime/consensus/consensustest"
)

// TestRoleClusterMode runs three index roles in cluster mode over a
// cluster.Static membership and one control-plane group: a write through
// any node is applied on every node, every node resolves it, the status
// shows the ownership, and reloads keep cluster mode.
func TestRoleClusterMode(t *testing.T) {
	ids := []string{"node-a", "node-b", "node-c"}
	roles := startClusterRoles(t, ids, func(_ string, opt *Options) {
		opt.Config.Peers = []string{"http://127.0.0.1:1"} // ignored in cluster mode
	})

	a := roles["node-a"]
	code, _, body := a.call("PUT", "/names/blog.example", `{"b3":"`+idA+`"}`, a.token(indexapi.ScopeWrite))
	if code != 200 {
		t.Fatalf("PUT via node-a: %d %s", code, body)
	}
	consensustest.Eventually(t, "the write applied everywhere", func() bool {
		for _, id := range ids {
			if rec, err := roles[id].db.Get(t.Context(), "blog.example"); err != nil || rec.Version != 1 {
				return false
			}
		}
		return true
	})
	for _, id := range ids {
		lr := roles[id]
		if code, _, body := lr.call("GET", "/resolve/blog.example", "", ""); code != 200 || !strings.Contains(string(body), idA) {
			t.Fatalf("resolve on %s: %d %s", id, code, body)
		}
	}
	d := a.Details().(map[string]any)
	cl, _ := d["cluster"].(map[string]any)
	if d["peers"] != 2 || cl["node_id"] != "node-a" || cl["r_eff"] != 3 || cl["w_idx"] != 2 {
		t.Fatalf("details %v", d)
	}
	cfg := roleTestConfig()
	cfg.Listen = a.Cfg.Load().Listen
	cfg.HedgeMS = 100
	if err := a.Apply(cfg); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	code, _, body = a.call("PUT", "/names/blog.example", `{"b3":"`+idB+`"}`, a.token(indexapi.ScopeWrite))
	if code != 200 || !strings.Contains(string(body), `"version":2`) {
		t.Fatalf("PUT after reload: %d %s", code, body)
	}
	values := a.opt.Metrics.Values()
	for _, s := range []string{`ron_index_owner_writes_total{role="index",kind="provider",result="failed"}`} {
		if _, ok := values[s]; !ok {
			t.Errorf("%s not exported", s)
		}
	}
}

func TestRoleClusterNeedsNodeToken(t *testing.T) {
	opt := roleOptions(t, roleTestConfig())
	opt.Cluster = cluster.NewStatic(cluster.NewView("node-a", nil, time.Time{}))
	opt.Plane, opt.Fatal = consensus.NewPlane(), func(error) {}
	r := New(opt)
	if err := r.Start(t.Context()); err == nil || !strings.Contains(err.Error(), "node token") {
		t.Fatalf("Start without a node token: %v", err)
	}
}

// TestRoleClusterNeedsControlPlane: cluster mode without the node's plane
// (names would have no log to go through) refuses to start.
func TestRoleClusterNeedsControlPlane(t *testing.T) {
	opt := roleOptions(t, roleTestConfig())
	opt.Cluster = cluster.NewStatic(cluster.NewView("node-a", nil, time.Time{}))
	opt.Node.Token = auth.TokenSource(opt.Keys, cluster.NodeScopes(false)...)
	r := New(opt)
	if err := r.Start(t.Context()); err == nil || !strings.Contains(err.Error(), "control plane") {
		t.Fatalf("Start without a control plane: %v", err)
	}
}

// TestRoleClusterImportsNamesHeldBefore: a node whose database holds names
// from before the control plane (written with the cluster off) parks them
// at start and imports them through the log, so every node of the group
// ends with them and their history; nothing is left parked.
func TestRoleClusterImportsNamesHeldBefore(t *testing.T) {
	ids := []string{"node-a", "node-b", "node-c"}
	dir := t.TempDir()
	single := roleOptions(t, roleTestConfig())
	single.Amnesia, single.DataDir = false, dir
	lr := startLive(t, single)
	for _, target := range []string{idA, idB} {
		if code, _, body := lr.call("PUT", "/names/kept.example", `{"b3":"`+target+`"}`, lr.token(indexapi.ScopeWrite)); code != 200 {
			t.Fatalf("PUT with the cluster off: %d %s", code, body)
		}
	}
	lr.stop(t.Context())

	roles := startClusterRoles(t, ids, func(id string, opt *Options) {
		if id == "node-a" {
			opt.Amnesia, opt.DataDir = false, dir
		}
	})
	consensustest.Eventually(t, "the names held before imported everywhere", func() bool {
		for _, id := range ids {
			h, err := roles[id].db.History(t.Context(), "kept.example")
			if err != nil || len(h) != 2 || h[0].Version != 2 || h[0].Target.String() != idB {
				return false
			}
		}
		recs, _, err := roles["node-a"].db.PendingImport(t.Context(), 1)
		return err == nil && len(recs) == 0
	})
}

// startClusterRoles starts an index role in cluster mode per id, sharing a
// root key, over cluster.Static memberships that list them all alive, and
// one control-plane group of them all; mutate adjusts each role's options
// first. The roles stop when the test ends.
func startClusterRoles(t *testing.T, ids []string, mutate func(id string, opt *Options)) map[string]*liveRole {
	t.Helper()
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	nodeTok := auth.TokenSource(keys, cluster.NodeScopes(false)...)
	roles := map[string]*liveRole{}
	statics := map[string]*cluster.Static{}
	var planes []*consensus.Plane
	for _, id := range ids {
		opt := roleOptions(t, roleTestConfig())
		opt.Keys = keys
		statics[id] = cluster.NewStatic(cluster.NewView(id, nil, time.Time{}))
		opt.Cluster, opt.Node.ID, opt.Node.Token = statics[id], id, nodeTok
		opt.ClusterConfig = cluster.DefaultConfig()
		opt.Plane, opt.Fatal = consensus.NewPlane(), func(err error) { t.Errorf("%s: fatal: %v", id, err) }
		mutate(id, &opt)
		planes = append(planes, opt.Plane)
		roles[id] = startLive(t, opt)
	}
	var ms []cluster.Member
	for _, id := range ids {
		ms = append(ms, cluster.Member{ID: id, Roles: []string{roleName, "storage"}, State: cluster.StateAlive,
			URLs: map[string]string{roleName: roles[id].AdvertiseURL()}})
	}
	for _, id := range ids {
		statics[id].Set(cluster.NewView(id, ms, time.Now()))
	}
	consensustest.Planes(t, ids, planes)
	return roles
}
