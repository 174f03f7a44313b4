package index

import (
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/runtime/cluster"
)

// TestRoleClusterMode runs three index roles in cluster mode over a
// cluster.Static membership: writes go through the primary, every node
// reads, the status shows the ownership, reloads keep cluster mode, and
// the anti-entropy worker stops with the role.
func TestRoleClusterMode(t *testing.T) {
	ids := []string{"node-a", "node-b", "node-c"}
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	nodeTok := auth.TokenSource(keys, cluster.NodeScopes(false)...)
	roles := map[string]*liveRole{}
	statics := map[string]*cluster.Static{}
	for _, id := range ids {
		opt := roleOptions(t, roleTestConfig())
		opt.Keys = keys
		opt.Config.Peers = []string{"http://127.0.0.1:1"} // ignored in cluster mode
		statics[id] = cluster.NewStatic(cluster.NewView(id, nil, time.Time{}))
		opt.Cluster, opt.Node.ID, opt.Node.Token = statics[id], id, nodeTok
		opt.ClusterConfig = cluster.DefaultConfig()
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

	a := roles["node-a"]
	code, _, body := a.call("PUT", "/names/blog.example", `{"b3":"`+idA+`"}`, a.token(indexapi.ScopeWrite))
	if code != 200 {
		t.Fatalf("PUT via node-a: %d %s", code, body)
	}
	for _, id := range ids {
		lr := roles[id]
		if rec, err := lr.db.Get(t.Context(), "blog.example"); err != nil || rec.Version != 1 {
			t.Fatalf("%s: %+v %v", id, rec, err)
		}
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
	for _, s := range []string{`ron_index_owner_writes_total{role="index",kind="provider",result="failed"}`,
		`ron_index_antientropy_records_total{role="index"}`} {
		if _, ok := values[s]; !ok {
			t.Errorf("%s not exported", s)
		}
	}
}

func TestRoleClusterNeedsNodeToken(t *testing.T) {
	opt := roleOptions(t, roleTestConfig())
	opt.Cluster = cluster.NewStatic(cluster.NewView("node-a", nil, time.Time{}))
	r := New(opt)
	if err := r.Start(t.Context()); err == nil || !strings.Contains(err.Error(), "node token") {
		t.Fatalf("Start without a node token: %v", err)
	}
}
