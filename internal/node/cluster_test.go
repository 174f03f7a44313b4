package node_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/node"
	"github.com/ronhq/ron/internal/node/nodetest"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/consensus/consensustest"
)

// TestClusterPairMembers: two nodes sharing a root key file see each other
// alive; the status document shows the membership (the commands that
// print it are tested in internal/cli/root); /readyz is ready. A node leaving is seen as left.
func TestClusterPairMembers(t *testing.T) {
	key := nodetest.SharedKeyFile(t)
	a, gossipA := nodetest.StartCluster(t, nodetest.ClusterNode{ID: "node-a", Roles: []string{"index"}, KeyFile: key,
		Mutate: func(c *node.Config) { c.Cluster.Zone = "z1" }})
	b, _ := nodetest.StartCluster(t, nodetest.ClusterNode{ID: "node-b", Roles: []string{"index"}, KeyFile: key, Join: []string{gossipA}})
	both := func(v *cluster.View) bool { return strings.Join(nodetest.AliveIDs(v), ",") == "node-a,node-b" }
	nodetest.WaitView(t, a, "node-a sees node-b", both)
	nodetest.WaitView(t, b, "node-b sees node-a", both)

	var doc node.Status
	if code := nodetest.GetJSON(t, "GET", "http://"+a.AdminAddr()+"/api/v1/status", "", &doc); code != 200 || doc.Cluster == nil ||
		doc.Cluster.NodeID != "node-a" || doc.Cluster.Zone != "z1" || len(doc.Cluster.Members) != 2 || !doc.Ready {
		t.Fatalf("status: %d %+v", code, doc)
	}
	var rd node.ReadyzReply
	if code := nodetest.GetJSON(t, "GET", "http://"+a.AdminAddr()+"/readyz", "", &rd); code != 200 || !rd.Ready {
		t.Fatalf("readyz: %d %+v", code, rd)
	}
	if !strings.Contains(nodetest.MetricsText(t, a.AdminAddr()), `ron_role_ready{role="node"} 1`) {
		t.Error("no node readiness gauge")
	}

	b.Shutdown("test")
	if err := b.Wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	nodetest.WaitView(t, a, "node-a sees node-b leave", func(v *cluster.View) bool {
		m, ok := v.Member("node-b")
		return ok && m.State == cluster.StateLeft
	})
}

// TestClusterOffRoutes: without cluster mode the status has no cluster
// object, the cluster routes answer 404 not_found and `ron cluster`
// exits 1 saying so.
func TestClusterOffRoutes(t *testing.T) {
	n, _ := startNode(t, func(c *node.Config) { c.Roles = []string{"storage"} })
	var raw map[string]json.RawMessage
	if code := nodetest.GetJSON(t, "GET", "http://"+n.AdminAddr()+"/api/v1/status", "", &raw); code != 200 {
		t.Fatalf("status %d", code)
	}
	if _, ok := raw["cluster"]; ok {
		t.Fatal("status has a cluster object with cluster mode off")
	}
	var env struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	for _, path := range []string{"/api/v1/cluster/members", "/api/v1/cluster/placement/" + strings.Repeat("0", 64)} {
		if code := nodetest.GetJSON(t, "GET", "http://"+n.AdminAddr()+path, "", &env); code != 404 || env.Error.Code != "not_found" ||
			!strings.Contains(env.Error.Message, "cluster mode is off") {
			t.Errorf("%s: %d %+v", path, code, env)
		}
	}
}

// TestClusterPlacementRoute: the placement route checks its id (400), needs
// the storage role (404 without it) and answers targets and holders.
func TestClusterPlacementRoute(t *testing.T) {
	key := nodetest.SharedKeyFile(t)
	st, _ := nodetest.StartCluster(t, nodetest.ClusterNode{ID: "node-s", Roles: []string{"index", "storage"}, KeyFile: key})
	ix, _ := nodetest.StartCluster(t, nodetest.ClusterNode{ID: "node-i", Roles: []string{"index"}, KeyFile: key})
	var env struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	id := "b3:" + strings.Repeat("ab", 32)
	for _, c := range []struct {
		name, path string
		code       int
	}{
		{"bare hex", strings.Repeat("ab", 32), 400},
		{"short", "b3:abcd", 400},
		{"uppercase", "b3:" + strings.Repeat("AB", 32), 400},
		{"other prefix", "sha256:" + strings.Repeat("ab", 32), 400},
	} {
		if code := nodetest.GetJSON(t, "GET", "http://"+st.AdminAddr()+"/api/v1/cluster/placement/"+c.path, "", &env); code != c.code ||
			env.Error.Code != "bad_request" {
			t.Errorf("%s: %d %+v", c.name, code, env)
		}
	}
	if code := nodetest.GetJSON(t, "GET", "http://"+ix.AdminAddr()+"/api/v1/cluster/placement/"+id, "", &env); code != 404 ||
		!strings.Contains(env.Error.Message, "storage role") {
		t.Errorf("no storage role: %d %+v", code, env)
	}
	var p node.PlacementReply
	if code := nodetest.GetJSON(t, "GET", "http://"+st.AdminAddr()+"/api/v1/cluster/placement/"+id, "", &p); code != 200 ||
		strings.Join(p.Targets, ",") != "node-s" || p.Holders == nil || len(p.Holders) != 0 {
		t.Fatalf("placement: %d %+v", code, p)
	}
}

// TestClusterReload: zone (UpdateNode) and the repair keys are applied
// live; the other [cluster] keys are refused by name and change nothing.
func TestClusterReload(t *testing.T) {
	n, _ := nodetest.StartCluster(t, nodetest.ClusterNode{ID: "node-r", Roles: []string{"index", "storage"}, KeyFile: nodetest.SharedKeyFile(t)})
	reload := func(mutate func(*node.Config)) error {
		node.SetReloadSource(n, func() (*node.Config, error) {
			c := *n.Config()
			mutate(&c)
			return &c, nil
		})
		_, err := n.Reload()
		return err
	}
	if err := reload(func(c *node.Config) {
		c.Cluster.Zone, c.Cluster.RepairPace, c.Cluster.DropExcess = "eu-2", 10<<20, false
	}); err != nil {
		t.Fatalf("hot keys refused: %v", err)
	}
	if st := node.ClusterStatus(n); st.Zone != "eu-2" {
		t.Fatalf("zone not applied: %+v", st)
	}
	nodetest.WaitView(t, n, "own metadata carries the new zone", func(v *cluster.View) bool {
		m, ok := v.Member("node-r")
		return ok && m.Zone == "eu-2"
	})
	if got := n.Config().Cluster.RepairPace; got != 10<<20 {
		t.Fatalf("pace not stored: %v", got)
	}
	if got := node.MetricValues(n)[`ron_repair_pace_bytes_per_second{role="storage"}`]; got != 10<<20 {
		t.Fatalf("storage did not apply the pace: %v", got)
	}
	for _, c := range []struct {
		name   string
		mutate func(*node.Config)
		want   string
	}{
		{"listen", func(c *node.Config) { c.Cluster.Listen = "127.0.0.1:1" }, "cluster.listen"},
		{"node id", func(c *node.Config) { c.Cluster.NodeID = "other" }, "cluster.node_id"},
		{"repair_after with zone", func(c *node.Config) { c.Cluster.RepairAfter, c.Cluster.Zone = time.Hour, "eu-3" }, "cluster.repair_after"},
		{"enabled", func(c *node.Config) { c.Cluster.Enabled = false }, "cluster.enabled"},
	} {
		if err := reload(c.mutate); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error naming %s", c.name, err, c.want)
		}
	}
	if st := node.ClusterStatus(n); st.Zone != "eu-2" {
		t.Fatalf("a refused reload changed the zone: %+v", st)
	}
}

// TestMemberAllowListWiring: with registry_admission the node follows its
// co-located registry: the follower runs and reads the committed HEAD. In
// cluster mode the registry is on the control plane, so the node is the
// server that bootstraps it alone and its registry reads once the log's
// init entry is applied (polled, bounded by the election and one commit).
func TestMemberAllowListWiring(t *testing.T) {
	n, _ := nodetest.StartCluster(t, nodetest.ClusterNode{ID: "node-g", Roles: []string{"registry", "index"}, KeyFile: nodetest.SharedKeyFile(t),
		Mutate: func(c *node.Config) {
			c.Cluster.RegistryAdmission = true
			c.Cluster.Server, c.Cluster.BootstrapExpect = true, 1
		}})
	var err error
	consensustest.Eventually(t, "the allow list follows the registry", func() bool {
		err = node.CheckMemberAllowList(n)
		return err == nil
	})
}

// TestClusterReloadRoleURL: a reload that changes only a role's
// advertise_url (hot for the index role) gossips the new URL
// (docs/cluster.md §2: UpdateNode on a URL change).
func TestClusterReloadRoleURL(t *testing.T) {
	n, _ := nodetest.StartCluster(t, nodetest.ClusterNode{ID: "node-u", Roles: []string{"index"}, KeyFile: nodetest.SharedKeyFile(t)})
	const moved = "http://127.0.0.1:9"
	node.SetReloadSource(n, func() (*node.Config, error) {
		c := *n.Config()
		c.Index.AdvertiseURL = moved + "/"
		return &c, nil
	})
	if _, err := n.Reload(); err != nil {
		t.Fatalf("reload: %v", err)
	}
	nodetest.WaitView(t, n, "own metadata carries the new index URL", func(v *cluster.View) bool {
		m, ok := v.Member("node-u")
		return ok && m.URL("index") == moved
	})
}
