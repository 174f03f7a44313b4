package root

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/internal/node"
	"github.com/ronhq/ron/internal/node/nodetest"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/controlplane"
)

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

// TestClusterMembersCommand: on two nodes that see each other alive, `ron
// cluster members` prints the membership as a table and as JSON, and `ron
// status` shows it.
func TestClusterMembersCommand(t *testing.T) {
	key := nodetest.SharedKeyFile(t)
	a, gossipA := nodetest.StartCluster(t, nodetest.ClusterNode{ID: "node-a", Roles: []string{"index"}, KeyFile: key,
		Mutate: func(c *node.Config) { c.Cluster.Zone = "z1" }})
	b, _ := nodetest.StartCluster(t, nodetest.ClusterNode{ID: "node-b", Roles: []string{"index"}, KeyFile: key, Join: []string{gossipA}})
	both := func(v *cluster.View) bool { return strings.Join(nodetest.AliveIDs(v), ",") == "node-a,node-b" }
	nodetest.WaitView(t, a, "node-a sees node-b", both)
	nodetest.WaitView(t, b, "node-b sees node-a", both)

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
	out, err = runCLI(t, "status", "--admin", a.AdminAddr())
	if err != nil || !strings.Contains(out, "MEMBER") || !strings.Contains(out, "node-b") {
		t.Fatalf("ron status: %v\n%s", err, out)
	}
}

// TestClusterCommandsClusterOff: without cluster mode `ron cluster` exits 1
// saying so; an unreachable admin plane exits 2, a bad -o 1.
func TestClusterCommandsClusterOff(t *testing.T) {
	n := nodetest.Start(t, func(c *node.Config) { c.Roles = []string{"storage"} })
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

// TestClusterPlacementCommand: `ron cluster placement` prints the targets
// and holders of an id, and exits 1 on a malformed one.
func TestClusterPlacementCommand(t *testing.T) {
	st, _ := nodetest.StartCluster(t, nodetest.ClusterNode{ID: "node-s", Roles: []string{"index", "storage"},
		KeyFile: nodetest.SharedKeyFile(t)})
	id := "b3:" + strings.Repeat("ab", 32)
	out, err := runCLI(t, "cluster", "placement", id, "--admin", st.AdminAddr())
	if err != nil || !strings.Contains(out, "targets  node-s") || !strings.Contains(out, "holders  (none)") {
		t.Fatalf("ron cluster placement: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "cluster", "placement", "nope", "--admin", st.AdminAddr()); exitCode(err) != cli.ExitFailure {
		t.Fatalf("bad id: %v", err)
	}
}

// TestClusterServersCommand: on three servers `ron cluster servers` lists
// the configuration with its leader (text and JSON); a change asked of a
// follower exits 1 naming the leader; on the leader a non-voter is added
// by hand and removed again.
func TestClusterServersCommand(t *testing.T) {
	nodes := nodetest.StartServers(t, 3, "index")
	leaderID := nodetest.WaitLeader(t, nodes)
	var leader, follower *node.Node
	for _, n := range nodes {
		if st, _ := n.ControlPlane(); st.ID == leaderID {
			leader = n
		} else {
			follower = n
		}
	}
	out, err := runCLI(t, "cluster", "servers", "--admin", follower.AdminAddr())
	if err != nil {
		t.Fatalf("ron cluster servers: %v\n%s", err, out)
	}
	for _, want := range []string{"state follower  leader " + leaderID, "SERVER", "ADDRESS", "srv-1", "srv-2", "srv-3", "alive"} {
		if !strings.Contains(out, want) {
			t.Errorf("servers output lacks %q:\n%s", want, out)
		}
	}
	out, err = runCLI(t, "cluster", "servers", "--admin", leader.AdminAddr(), "-o", "json")
	var st controlplane.Status
	if err != nil || json.Unmarshal([]byte(out), &st) != nil || st.State != "leader" || len(st.Servers) != 3 ||
		!slices.ContainsFunc(st.Servers, func(s controlplane.ServerStatus) bool { return s.Leader && s.ID == leaderID && s.Voter }) {
		t.Fatalf("servers -o json: %v\n%s", err, out)
	}

	out, err = runCLI(t, "cluster", "servers", "remove", "srv-9", "--admin", follower.AdminAddr())
	if exitCode(err) != cli.ExitFailure || !strings.Contains(err.Error(), "the leader is "+leaderID) {
		t.Fatalf("remove on a follower: %v\n%s", err, out)
	}
	out, err = runCLI(t, "cluster", "servers", "add", "spare", "127.0.0.1:1", "--non-voter", "--admin", leader.AdminAddr())
	if err != nil || !strings.Contains(out, "spare") {
		t.Fatalf("add a non-voter on the leader: %v\n%s", err, out)
	}
	out, err = runCLI(t, "cluster", "servers", "remove", "spare", "--admin", leader.AdminAddr())
	if err != nil || strings.Contains(out, "spare") {
		t.Fatalf("remove it again: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "cluster", "servers", "remove", leaderID, "--admin", leader.AdminAddr()); exitCode(err) != cli.ExitFailure {
		t.Fatalf("the leader removed itself: %v", err)
	}
}
