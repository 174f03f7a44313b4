package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestClusterPartitionLab runs four nodes in a netLab (one network
// namespace each) and shows that the lab's partitions and signals are
// real, and that membership re-forms by itself once a partition heals:
//
//   - SIGSTOP reaches ron itself inside its namespace: the others see it
//     dead until SIGCONT;
//   - under a 2|2 split each side sees the other dead in its membership,
//     the test process still reaches all four admin listeners, and ron run
//     inside each namespace reaches exactly its own side; the split is held
//     until both sides have seen the other dead for longer than
//     memberlist's gossip to the dead (clDeadGossip), so that only ron's
//     reconnect to dead members (docs/cluster.md §2) can bring them
//     together, and once the cut is removed all four see all alive again
//     within clRejoinLimit without any restart, through reconnects
//     (ron_cluster_reconnects_total{result="ok"});
//   - under a 3|1 split (the fourth node in no group) the fourth reaches
//     nobody; healed, every node reaches every other and all see all alive
//     again (clRejoinLimit);
//   - SIGKILL reaches ron itself: the cut-off side is killed, restarted in
//     the lab and all four see all alive again (status and the membership
//     gauge, read with the lab's admin token).
func TestClusterPartitionLab(t *testing.T) {
	c := startTestCluster(t, clusterOpts{nodes: 4, netns: true})
	for _, n := range c.nodes {
		c.checkInLab(n)
	}
	start, last := time.Now(), time.Now()
	phase := func(what string) { // logs the time since the start and since the previous phase
		t.Logf("%7s (+%s) %s", time.Since(start).Round(time.Millisecond), time.Since(last).Round(time.Millisecond), what)
		last = time.Now()
	}
	n1, n2, n3, n4 := c.nodes[0], c.nodes[1], c.nodes[2], c.nodes[3]

	n4.stop()
	c.waitDead(n4)
	n4.cont()
	c.waitConverged(clHealLimit, "SIGCONT")
	phase("SIGSTOP: seen dead; SIGCONT: all alive again")

	left, right := []*clNode{n1, n2}, []*clNode{n3, n4}
	c.partition(left, right)
	phase("2|2: partitioned")
	c.waitSplit(left, right)
	phase("2|2: each side sees the other dead")
	c.checkReachable()
	c.checkPaths(left, right)
	c.waitDeadFor(clDeadGossip, left, right)
	phase("2|2: held past memberlist's gossip to the dead")
	okBefore := c.reconnectsOK()
	c.heal()
	c.waitConverged(clRejoinLimit, "the 2|2 split healed, nothing restarted")
	phase("2|2 healed: all alive again without a restart")
	if ok := c.reconnectsOK(); ok <= okBefore {
		t.Errorf("successful reconnects on all nodes: %v before the heal, %v after; want more", okBefore, ok)
	}

	c.checkPaths(c.nodes)
	c.partition(c.nodes[:3])
	c.checkPaths(c.nodes[:3])
	c.heal()
	c.checkPaths(c.nodes)
	c.waitConverged(clRejoinLimit, "the 3|1 split healed")
	phase("paths checked under 2|2, 3|1 and healed; all alive")

	for _, n := range right {
		n.kill9()
		c.checkKilled(n)
	}
	c.waitDead(right...)
	for _, n := range right {
		c.restart(n)
		c.checkInLab(n)
	}
	c.waitConverged(clHealLimit, "restart of the killed side")
	phase("SIGKILL and restart: all alive again")
	for _, n := range c.nodes { // /metrics answers the test process (no loopback caller) with the admin token
		if v := n.mustMetric("ron_cluster_members", `role="node"`, `state="alive"`); v != 4 {
			t.Errorf("%s: ron_cluster_members{state=alive} = %v, want 4", n.id, v)
		}
	}
}

// clDeadGossip is memberlist's GossipToTheDeadTime in the local profile:
// for this long after marking a member dead a node may still gossip to it,
// which can heal a short partition without ron's reconnect.
const clDeadGossip = 15 * time.Second

// clRejoinLimit bounds "all alive everywhere" after a partition heals
// without a restart: every node of a side tries a member of the other side
// every reconnect interval (1 s in the local profile; with as many dead as
// alive members every node tries every interval); the first exchange makes
// the member refute the dead claim and the next exchange or its gossip
// brings the refutation back, then gossip spreads it within a few 200 ms
// rounds: a few seconds. The bound is the spec's convergence bound for a
// start (clConvergeLimit, 10 s).
const clRejoinLimit = clConvergeLimit

// waitDeadFor waits until every node sees the members outside its group
// (groups as in c.partition) dead for at least d (by the since of its
// status), bounded by d + clSplitLimit.
func (c *testCluster) waitDeadFor(d time.Duration, groups ...[]*clNode) {
	c.t.Helper()
	full := c.fullGroups(groups)
	waitFor(c.t, d+clSplitLimit, clPollEvery, fmt.Sprintf("every side of %v to have seen the others dead for %s", c.groupIDs(full), d), func() (bool, string) {
		ok, seen := true, []string{}
		for _, g := range full {
			for _, n := range g {
				st, err := n.status()
				if err != nil {
					return false, fmt.Sprintf("%s: %v", n.id, err)
				}
				for _, m := range st.Cluster.Members {
					if slices.ContainsFunc(g, func(x *clNode) bool { return x.id == m.ID }) {
						continue
					}
					since, err := time.Parse(time.RFC3339Nano, m.Since)
					if m.State != "dead" || err != nil || time.Since(since) < d {
						ok = false
						seen = append(seen, fmt.Sprintf("%s sees %s %s since %s", n.id, m.ID, m.State, m.Since))
					}
				}
			}
		}
		return ok, strings.Join(seen, "; ")
	})
}

// reconnectsOK sums ron_cluster_reconnects_total{result="ok"} over the
// running nodes.
func (c *testCluster) reconnectsOK() float64 {
	c.t.Helper()
	sum := 0.0
	for _, n := range c.running() {
		sum += n.mustMetric("ron_cluster_reconnects_total", `role="node"`, `result="ok"`)
	}
	return sum
}

// checkInLab checks that n's process is ron itself (ip netns exec has
// exec'd it, so signals sent to the pid reach ron) inside n's namespace.
func (c *testCluster) checkInLab(n *clNode) {
	c.t.Helper()
	exe, err := filepath.EvalSymlinks(ronBin)
	if err != nil {
		c.t.Fatal(err)
	}
	if ok, seen := c.needLab().inside(n.slot, n.cmd.Process.Pid, exe); !ok {
		c.t.Fatalf("%s: %s", n.id, seen)
	}
}

// checkKilled checks that n's process (exited) ended by SIGKILL.
func (c *testCluster) checkKilled(n *clNode) {
	c.t.Helper()
	if ws, ok := n.state.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		c.t.Errorf("%s after SIGKILL: %v, want killed by the signal", n.id, n.state)
	}
}

// clSplitLimit bounds the wait for both sides of a split to see each other
// dead. A suspicion that no peer confirms (an isolated node has none; a
// peer's dead message about an older incarnation does not count) runs to
// memberlist's maximum, SuspicionMaxTimeoutMult × SuspicionMult ×
// max(1, log10 n) × ProbeInterval = 6 × 3 × 1 × 1 s = 18 s in the local
// profile with up to 10 nodes, plus probe rounds and gossip: 4.5–22 s
// after the cut seen; twice that here.
const clSplitLimit = 45 * time.Second

// waitSplit waits (clSplitLimit) until every node sees exactly the members
// of its group alive and every other member dead, with the groups of
// c.partition: a node in no group is a group of its own.
func (c *testCluster) waitSplit(groups ...[]*clNode) {
	c.t.Helper()
	full := c.fullGroups(groups)
	waitFor(c.t, clSplitLimit, clPollEvery, fmt.Sprintf("the split %v in every membership", c.groupIDs(full)), func() (bool, string) {
		ok, seen := true, []string{}
		for _, g := range full {
			want := map[string]string{}
			for _, m := range c.nodes {
				want[m.id] = map[bool]string{true: "alive", false: "dead"}[slices.Contains(g, m)]
			}
			for _, n := range g {
				good, s := n.membersAre(want)
				ok, seen = ok && good, append(seen, s)
			}
		}
		return ok, strings.Join(seen, "; ")
	})
}

// fullGroups is groups plus a group of its own for every node in none.
func (c *testCluster) fullGroups(groups [][]*clNode) [][]*clNode {
	groups = slices.Clone(groups)
	for _, n := range c.nodes {
		if !slices.ContainsFunc(groups, func(g []*clNode) bool { return slices.Contains(g, n) }) {
			groups = append(groups, []*clNode{n})
		}
	}
	return groups
}

// checkReachable checks that the test process reads every node's status
// on its admin listener (a partition cuts nodes from each other only).
func (c *testCluster) checkReachable() {
	c.t.Helper()
	for _, n := range c.nodes {
		if _, err := n.status(); err != nil {
			c.t.Errorf("%s unreachable from the test process during the partition: %v", n.id, err)
		}
	}
}

// checkPaths checks every ordered pair of nodes on the network itself: ron
// run in one node's namespace reaches the other's admin listener exactly
// when both are in one group (groups as in c.partition).
func (c *testCluster) checkPaths(groups ...[]*clNode) {
	c.t.Helper()
	for _, g := range c.fullGroups(groups) {
		for _, from := range g {
			for _, to := range c.nodes {
				if to == from {
					continue
				}
				if got, out := c.reaches(from, to); got != slices.Contains(g, to) {
					c.t.Errorf("%s reaches %s: %t, want %t (groups %v): %s", from.id, to.id, got, !got, c.groupIDs(groups), out)
				}
			}
		}
	}
}

// reaches runs `ron status --admin <to's admin>` in from's namespace
// (bounded by clObserveLimit) and reports whether it reached the listener
// (exit 0 or 1: ready or not; 2 is unreachable), with its output.
func (c *testCluster) reaches(from, to *clNode) (bool, string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clObserveLimit)
	defer cancel()
	cmd := c.needLab().commandContext(ctx, from.slot, ronBin, "status", "--admin", to.admin)
	cmd.Dir, cmd.Env = os.TempDir(), cleanEnv()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		c.t.Fatalf("ron status in %s's namespace still running after %s", from.id, clObserveLimit)
	case err != nil && !errors.As(err, &ee):
		c.t.Fatalf("ron status in %s's namespace: %v", from.id, err)
	}
	return cmd.ProcessState.ExitCode() != 2, strings.TrimSpace(string(out))
}

// groupIDs are the node ids of each group.
func (c *testCluster) groupIDs(groups [][]*clNode) [][]string {
	out := make([][]string, len(groups))
	for i, g := range groups {
		out[i] = ids(g)
	}
	return out
}
