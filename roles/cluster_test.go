package roles

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/cli"
	"github.com/ronhq/ron/roles/registry"
	"github.com/ronhq/ron/roles/registry/httpapi"
	"github.com/ronhq/ron/runtime/cluster"
)

// clusterTestDeadline bounds every wait on gossip in these tests.
const clusterTestDeadline = 15 * time.Second

// freeGossipPort returns a loopback port free for both TCP and UDP (the
// gossip listener needs both on one port; cluster.listen takes no port 0).
func freeGossipPort(t *testing.T) int {
	t.Helper()
	for range 20 {
		tl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := tl.Addr().(*net.TCPAddr).Port
		ul, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port))
		tl.Close()
		if err == nil {
			ul.Close()
			return port
		}
	}
	t.Fatal("no free gossip port")
	return 0
}

// sharedKeyFile writes a root key file for the nodes of one test cluster.
func sharedKeyFile(t *testing.T) string {
	t.Helper()
	return writeKeyFile(t, []byte(hex.EncodeToString(bytes.Repeat([]byte{42}, auth.KeySize))+"\n"))
}

// clusterNodeOpts describe one test node of a cluster.
type clusterNodeOpts struct {
	id      string
	roles   []string
	keyFile string
	join    []string
	mutate  func(*Config)
}

// startClusterNode runs an amnesia node in cluster mode (profile local) on
// loopback and returns it with its gossip address.
func startClusterNode(t *testing.T, o clusterNodeOpts) (*Node, string) {
	t.Helper()
	gossip := "127.0.0.1:" + strconv.Itoa(freeGossipPort(t))
	n, _ := startNode(t, func(c *Config) {
		c.Roles = o.roles
		c.Cluster.Enabled = true
		c.Cluster.NodeID = o.id
		c.Cluster.Listen = gossip
		c.Cluster.Join = o.join
		c.Cluster.Profile = cluster.ProfileLocal
		c.Cluster.RootKeyFile = o.keyFile
		c.Cluster.RepairAfter = 10 * time.Second
		c.Cluster.RepairInterval = time.Second
		if o.mutate != nil {
			o.mutate(c)
		}
	})
	return n, gossip
}

// waitView waits until cond holds for n's membership view.
func waitView(t *testing.T, n *Node, what string, cond func(*cluster.View) bool) {
	t.Helper()
	ch, cancel := n.cluster.c.Subscribe()
	defer cancel()
	ctx, stop := context.WithTimeout(context.Background(), clusterTestDeadline)
	defer stop()
	for !cond(n.cluster.c.View()) {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("%s: not within %s; view %+v", what, clusterTestDeadline, n.cluster.c.View().Members)
		}
	}
}

// aliveIDs is the ids of the alive members of v.
func aliveIDs(v *cluster.View) []string {
	var out []string
	for _, m := range v.Members {
		if m.Alive() {
			out = append(out, m.ID)
		}
	}
	return out
}

// runCLI runs the ron command line with args in an empty environment (the
// test process's RON_* variables are not config) and returns its output.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := (&app{getenv: func(string) string { return "" }, environ: func() []string { return nil }, exit: func(int) {}}).rootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// exitCode is the cli exit code of err (0 for nil).
func exitCode(err error) int {
	var ee *cli.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestClusterPairMembers: two nodes sharing a root key file see each other
// alive; `ron cluster members`, `ron status` and the status document show
// the membership; /readyz is ready. A node leaving is seen as left.
func TestClusterPairMembers(t *testing.T) {
	key := sharedKeyFile(t)
	a, gossipA := startClusterNode(t, clusterNodeOpts{id: "node-a", roles: []string{"index"}, keyFile: key,
		mutate: func(c *Config) { c.Cluster.Zone = "z1" }})
	b, _ := startClusterNode(t, clusterNodeOpts{id: "node-b", roles: []string{"index"}, keyFile: key, join: []string{gossipA}})
	both := func(v *cluster.View) bool { return strings.Join(aliveIDs(v), ",") == "node-a,node-b" }
	waitView(t, a, "node-a sees node-b", both)
	waitView(t, b, "node-b sees node-a", both)

	out, err := runCLI(t, "cluster", "members", "--admin", a.AdminAddr())
	if err != nil {
		t.Fatalf("ron cluster members: %v\n%s", err, out)
	}
	for _, want := range []string{"node node-a  zone z1  members 2", "MEMBER", "node-a", "node-b", "alive", "index", "z1"} {
		if !strings.Contains(out, want) {
			t.Errorf("members output lacks %q:\n%s", want, out)
		}
	}
	out, err = runCLI(t, "cluster", "members", "--admin", b.AdminAddr(), "-o", "json")
	var st cluster.Status
	if err != nil || json.Unmarshal([]byte(out), &st) != nil || st.NodeID != "node-b" || len(st.Members) != 2 ||
		st.Members[0].ID != "node-a" || st.Members[0].State != cluster.StateAlive || st.Members[0].Zone != "z1" ||
		st.Members[0].Since.IsZero() || len(st.Members[1].Roles) != 1 {
		t.Fatalf("members -o json: %v\n%s", err, out)
	}

	var doc Status
	if code := getJSON(t, "GET", "http://"+a.AdminAddr()+"/api/v1/status", "", &doc); code != 200 || doc.Cluster == nil ||
		doc.Cluster.NodeID != "node-a" || doc.Cluster.Zone != "z1" || len(doc.Cluster.Members) != 2 || !doc.Ready {
		t.Fatalf("status: %d %+v", code, doc)
	}
	out, err = runCLI(t, "status", "--admin", a.AdminAddr())
	if err != nil || !strings.Contains(out, "MEMBER") || !strings.Contains(out, "node-b") {
		t.Fatalf("ron status: %v\n%s", err, out)
	}
	var rd readyzReply
	if code := getJSON(t, "GET", "http://"+a.AdminAddr()+"/readyz", "", &rd); code != 200 || !rd.Ready {
		t.Fatalf("readyz: %d %+v", code, rd)
	}
	if !strings.Contains(metricsText(t, a.AdminAddr()), `ron_role_ready{role="node"} 1`) {
		t.Error("no node readiness gauge")
	}

	b.Shutdown("test")
	<-b.manager.ShutdownDone()
	waitView(t, a, "node-a sees node-b leave", func(v *cluster.View) bool {
		m, ok := v.Member("node-b")
		return ok && m.State == cluster.StateLeft
	})
}

// TestClusterOffRoutes: without cluster mode the status has no cluster
// object, the cluster routes answer 404 not_found and `ron cluster`
// exits 1 saying so.
func TestClusterOffRoutes(t *testing.T) {
	n, _ := startNode(t, func(c *Config) { c.Roles = []string{"storage"} })
	var raw map[string]json.RawMessage
	if code := getJSON(t, "GET", "http://"+n.AdminAddr()+"/api/v1/status", "", &raw); code != 200 {
		t.Fatalf("status %d", code)
	}
	if _, ok := raw["cluster"]; ok {
		t.Fatal("status has a cluster object with cluster mode off")
	}
	var env struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	for _, path := range []string{"/api/v1/cluster/members", "/api/v1/cluster/placement/" + strings.Repeat("0", 64)} {
		if code := getJSON(t, "GET", "http://"+n.AdminAddr()+path, "", &env); code != 404 || env.Error.Code != "not_found" ||
			!strings.Contains(env.Error.Message, "cluster mode is off") {
			t.Errorf("%s: %d %+v", path, code, env)
		}
	}
	out, err := runCLI(t, "cluster", "members", "--admin", n.AdminAddr())
	if exitCode(err) != cli.ExitFailure || !strings.Contains(err.Error(), "cluster mode is off") {
		t.Fatalf("ron cluster members: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "cluster", "members", "--admin", "127.0.0.1:1"); exitCode(err) != cli.ExitUnreachable {
		t.Fatalf("unreachable admin: %v", err)
	}
	if _, err := runCLI(t, "cluster", "members", "--admin", n.AdminAddr(), "-o", "yaml"); exitCode(err) != cli.ExitFailure {
		t.Fatalf("bad -o: %v", err)
	}
}

// TestClusterPlacementRoute: the placement route checks its id (400), needs
// the storage role (404 without it) and answers targets and holders.
func TestClusterPlacementRoute(t *testing.T) {
	key := sharedKeyFile(t)
	st, _ := startClusterNode(t, clusterNodeOpts{id: "node-s", roles: []string{"index", "storage"}, keyFile: key})
	ix, _ := startClusterNode(t, clusterNodeOpts{id: "node-i", roles: []string{"index"}, keyFile: key})
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
		if code := getJSON(t, "GET", "http://"+st.AdminAddr()+"/api/v1/cluster/placement/"+c.path, "", &env); code != c.code ||
			env.Error.Code != "bad_request" {
			t.Errorf("%s: %d %+v", c.name, code, env)
		}
	}
	if code := getJSON(t, "GET", "http://"+ix.AdminAddr()+"/api/v1/cluster/placement/"+id, "", &env); code != 404 ||
		!strings.Contains(env.Error.Message, "storage role") {
		t.Errorf("no storage role: %d %+v", code, env)
	}
	var p PlacementReply
	if code := getJSON(t, "GET", "http://"+st.AdminAddr()+"/api/v1/cluster/placement/"+id, "", &p); code != 200 ||
		strings.Join(p.Targets, ",") != "node-s" || p.Holders == nil || len(p.Holders) != 0 {
		t.Fatalf("placement: %d %+v", code, p)
	}
	out, err := runCLI(t, "cluster", "placement", id, "--admin", st.AdminAddr())
	if err != nil || !strings.Contains(out, "targets  node-s") || !strings.Contains(out, "holders  (none)") {
		t.Fatalf("ron cluster placement: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "cluster", "placement", "nope", "--admin", st.AdminAddr()); exitCode(err) != cli.ExitFailure {
		t.Fatalf("bad id: %v", err)
	}
}

// TestClusterReload: zone (UpdateNode) and the repair keys are applied
// live; the other [cluster] keys are refused by name and change nothing.
func TestClusterReload(t *testing.T) {
	n, _ := startClusterNode(t, clusterNodeOpts{id: "node-r", roles: []string{"index", "storage"}, keyFile: sharedKeyFile(t)})
	reload := func(mutate func(*Config)) error {
		n.src = func() (*Config, error) {
			c := *n.cfg.Load()
			mutate(&c)
			return &c, nil
		}
		_, err := n.Reload()
		return err
	}
	if err := reload(func(c *Config) { c.Cluster.Zone, c.Cluster.RepairPace, c.Cluster.DropExcess = "eu-2", 10<<20, false }); err != nil {
		t.Fatalf("hot keys refused: %v", err)
	}
	if st := n.cluster.status(); st.Zone != "eu-2" {
		t.Fatalf("zone not applied: %+v", st)
	}
	waitView(t, n, "own metadata carries the new zone", func(v *cluster.View) bool {
		m, ok := v.Member("node-r")
		return ok && m.Zone == "eu-2"
	})
	if got := n.cfg.Load().Cluster.RepairPace; got != 10<<20 {
		t.Fatalf("pace not stored: %v", got)
	}
	if got := n.metrics.Values()[`ron_repair_pace_bytes_per_second{role="storage"}`]; got != 10<<20 {
		t.Fatalf("storage did not apply the pace: %v", got)
	}
	for _, c := range []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"listen", func(c *Config) { c.Cluster.Listen = "127.0.0.1:1" }, "cluster.listen"},
		{"node id", func(c *Config) { c.Cluster.NodeID = "other" }, "cluster.node_id"},
		{"repair_after with zone", func(c *Config) { c.Cluster.RepairAfter, c.Cluster.Zone = time.Hour, "eu-3" }, "cluster.repair_after"},
		{"enabled", func(c *Config) { c.Cluster.Enabled = false }, "cluster.enabled"},
	} {
		if err := reload(c.mutate); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error naming %s", c.name, err, c.want)
		}
	}
	if st := n.cluster.status(); st.Zone != "eu-2" {
		t.Fatalf("a refused reload changed the zone: %+v", st)
	}
}

// TestRegistryAdmissionWiring: with registry_admission the node follows its
// co-located registry: the follower runs and reads the committed HEAD.
func TestRegistryAdmissionWiring(t *testing.T) {
	n, _ := startClusterNode(t, clusterNodeOpts{id: "node-g", roles: []string{"registry"}, keyFile: sharedKeyFile(t),
		mutate: func(c *Config) { c.Cluster.RegistryAdmission = true }})
	if n.cluster.admission == nil || n.cluster.stopAdmission == nil {
		t.Fatal("registry admission is not running")
	}
	rg := n.roles["registry"].(*registry.Role)
	if err := n.cluster.admission.syncHead(context.Background(), httpapi.NewLocalClient(rg.API())); err != nil {
		t.Fatalf("reading the co-located HEAD: %v", err)
	}
	if _, ok := n.cluster.admission.admitted(); !ok {
		t.Fatal("HEAD read but nothing known")
	}
}

// TestClusterReloadRoleURL: a reload that changes only a role's
// advertise_url (hot for the index role) gossips the new URL
// (docs/cluster.md §2: UpdateNode on a URL change).
func TestClusterReloadRoleURL(t *testing.T) {
	n, _ := startClusterNode(t, clusterNodeOpts{id: "node-u", roles: []string{"index"}, keyFile: sharedKeyFile(t)})
	const moved = "http://127.0.0.1:9"
	n.src = func() (*Config, error) {
		c := *n.cfg.Load()
		c.Index.AdvertiseURL = moved + "/"
		return &c, nil
	}
	if _, err := n.Reload(); err != nil {
		t.Fatalf("reload: %v", err)
	}
	waitView(t, n, "own metadata carries the new index URL", func(v *cluster.View) bool {
		m, ok := v.Member("node-u")
		return ok && m.URL("index") == moved
	})
}

// TestClusterMetaLatestWins: when a reload's metadata is sent while run is
// still sending the bound addresses with the config it started from, the
// last metadata sent is the reloaded one, with the bound addresses.
func TestClusterMetaLatestWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		old := DefaultConfig()
		old.Roles, old.Cluster.Enabled, old.Cluster.Zone = []string{"index"}, true, "z1"
		next := old
		next.Cluster.Zone = "z2"
		var (
			mu      sync.Mutex
			sent    []cluster.Meta
			entered = make(chan struct{})
			release = make(chan struct{})
		)
		cn := &clusterNode{id: "node-m", want: &old, meta: nodeMeta(&old, "node-m", nil)}
		cn.send = func(m cluster.Meta) error {
			mu.Lock()
			first := len(sent) == 0 && entered != nil
			ch := entered
			entered = nil
			mu.Unlock()
			if first {
				close(ch)
				<-release // run's send stalls while the reload sends
			}
			mu.Lock()
			sent = append(sent, m)
			mu.Unlock()
			return nil
		}
		cn.mu.Lock()
		cn.bound, cn.gen = map[string]string{"index": "127.0.0.1:4321"}, cn.gen+1
		cn.mu.Unlock()
		done := make(chan error, 1)
		go func() { done <- cn.updateMeta(nil) }() // as run, with the bound addresses
		synctest.Wait()
		if err := cn.updateMeta(&next); err != nil {
			t.Fatalf("reload's update: %v", err)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatalf("run's update: %v", err)
		}
		want := nodeMeta(&next, "node-m", map[string]string{"index": "127.0.0.1:4321"})
		mu.Lock()
		defer mu.Unlock()
		if last := sent[len(sent)-1]; !reflect.DeepEqual(last, want) || !reflect.DeepEqual(cn.meta, want) {
			t.Fatalf("last sent %+v (recorded %+v), want %+v", last, cn.meta, want)
		}
	})
}

// TestClusterMetaRejectsInvalid: metadata that does not validate fails the
// update and leaves the config to gossip unchanged.
func TestClusterMetaRejectsInvalid(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Roles, cfg.Cluster.Enabled = []string{"index"}, true
	bad := cfg
	bad.Index.AdvertiseURL = "http://" + strings.Repeat("h", 600)
	sends := 0
	cn := &clusterNode{id: "node-v", want: &cfg, meta: nodeMeta(&cfg, "node-v", nil),
		send: func(cluster.Meta) error { sends++; return nil }}
	if err := cn.updateMeta(&bad); err == nil || !strings.Contains(err.Error(), "512") {
		t.Fatalf("oversized metadata: %v", err)
	}
	if err := cn.updateMeta(nil); err != nil || sends != 0 || cn.want != &cfg {
		t.Fatalf("after a refused update: %v, %d sends", err, sends)
	}
}
