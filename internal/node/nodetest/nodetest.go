// Package nodetest is the shared harness of tests that run whole ron nodes
// in one process (the nodes of internal/node, the commands of internal/cli):
// a node on free loopback ports that stops at the test's end, cluster nodes
// on loopback gossip with a shared root key, and waits on the membership.
package nodetest

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/internal/node"
	"github.com/ronhq/ron/runtime/cluster"
)

// Deadline bounds every wait on gossip.
const Deadline = 15 * time.Second

// Start runs an ephemeral node (node.EphemeralConfig) changed by mutate;
// the node is shut down at the test's end and Run's error fails the test.
// A reload re-reads the config as Start built it.
func Start(t testing.TB, mutate func(*node.Config)) *node.Node {
	t.Helper()
	cfg := node.EphemeralConfig(t.TempDir())
	if mutate != nil {
		mutate(&cfg)
	}
	reloaded := cfg
	n, err := node.Start(&cfg, func() (*node.Config, error) { c := reloaded; return &c, nil }, os.Stderr, "test")
	if err != nil {
		t.Fatalf("node failed to start: %v", err)
	}
	t.Cleanup(func() {
		n.Shutdown("test end")
		if err := n.Wait(); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return n
}

// ClusterNode describes one node of a test cluster.
type ClusterNode struct {
	ID      string
	Roles   []string
	KeyFile string   // SharedKeyFile's path: the nodes of one cluster share it
	Join    []string // gossip addresses to join
	Mutate  func(*node.Config)
}

// StartCluster runs an ephemeral node in cluster mode (profile local, fast
// repair timers) on loopback and returns it with its gossip address.
func StartCluster(t testing.TB, o ClusterNode) (*node.Node, string) {
	t.Helper()
	gossip := "127.0.0.1:" + strconv.Itoa(FreeGossipPort(t))
	n := Start(t, func(c *node.Config) {
		c.Roles = o.Roles
		c.Cluster.Enabled = true
		c.Cluster.NodeID = o.ID
		c.Cluster.Listen = gossip
		c.Cluster.RaftListen = "127.0.0.1:0"
		c.Cluster.Join = o.Join
		c.Cluster.Profile = cluster.ProfileLocal
		c.Cluster.RootKeyFile = o.KeyFile
		c.Cluster.RepairAfter = 10 * time.Second
		c.Cluster.RepairInterval = time.Second
		if o.Mutate != nil {
			o.Mutate(c)
		}
	})
	return n, gossip
}

// FreeGossipPort returns a loopback port free for both TCP and UDP (the
// gossip listener needs both on one port; cluster.listen takes no port 0).
func FreeGossipPort(t testing.TB) int {
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

// SharedKeyFile writes a root key file for the nodes of one test cluster.
func SharedKeyFile(t testing.TB) string {
	t.Helper()
	return WriteKeyFile(t, []byte(hex.EncodeToString(bytes.Repeat([]byte{42}, auth.KeySize))+"\n"))
}

// WriteKeyFile writes content as a root key file in a temporary folder
// and returns its path.
func WriteKeyFile(t testing.TB, content []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cluster.key")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// WaitView waits, at most Deadline, until cond holds for n's membership
// view; what names the wait in the failure.
func WaitView(t testing.TB, n *node.Node, what string, cond func(*cluster.View) bool) {
	t.Helper()
	m := n.Membership()
	ch, cancel := m.Subscribe()
	defer cancel()
	ctx, stop := context.WithTimeout(context.Background(), Deadline)
	defer stop()
	for !cond(m.View()) {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("%s: not within %s; view %+v", what, Deadline, m.View().Members)
		}
	}
}

// AliveIDs is the ids of the alive members of v.
func AliveIDs(v *cluster.View) []string {
	var out []string
	for _, m := range v.Members {
		if m.Alive() {
			out = append(out, m.ID)
		}
	}
	return out
}

// GetJSON sends method url with body and decodes the answer into out (when
// not nil), failing the test if it is not JSON; it returns the status.
func GetJSON(t testing.TB, method, url, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %q", method, url, err, data)
		}
	}
	return resp.StatusCode
}

// MetricsText is the /metrics page of the listener at addr.
func MetricsText(t testing.TB, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// StartServers runs n cluster nodes ("srv-1" …) with roles (the index
// role included) as control-plane servers that bootstrap together, and
// waits until they agree on a leader.
func StartServers(t testing.TB, n int, roles ...string) []*node.Node {
	t.Helper()
	key := SharedKeyFile(t)
	var nodes []*node.Node
	var join []string
	for i := range n {
		nd, gossip := StartCluster(t, ClusterNode{ID: "srv-" + strconv.Itoa(i+1), Roles: roles, KeyFile: key, Join: join,
			Mutate: func(c *node.Config) { c.Cluster.Server, c.Cluster.BootstrapExpect = true, n }})
		nodes = append(nodes, nd)
		join = append(join, gossip)
	}
	WaitLeader(t, nodes)
	return nodes
}

// WaitLeader waits, at most Deadline, until every node of nodes knows the
// same control-plane leader, one of them, and returns its id.
func WaitLeader(t testing.TB, nodes []*node.Node) string {
	t.Helper()
	deadline := time.Now().Add(Deadline)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		leaders := map[string]bool{}
		for _, n := range nodes {
			st, _ := n.ControlPlane()
			leaders[st.Leader] = true
		}
		if len(leaders) == 1 && !leaders[""] {
			for id := range leaders {
				return id
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no control-plane leader all agree on within %s: %v", Deadline, leaders)
		}
		<-tick.C
	}
}
