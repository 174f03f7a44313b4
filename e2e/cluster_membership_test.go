package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestClusterConvergence (docs/cluster.md §13.1): five nodes started at
// once see each other alive within 10 s; the status document (docs/cluster.md §9), the
// membership gauge (docs/cluster.md §11), `ron cluster members` and the placement endpoint
// agree with it.
func TestClusterConvergence(t *testing.T) {
	c := newTestCluster(t, clusterOpts{nodes: 5})
	start := time.Now()
	for _, n := range c.nodes {
		c.launchNode(n)
	}
	for _, n := range c.nodes {
		if err := n.waitReady(false); err != nil {
			t.Fatal(err)
		}
	}
	ready := time.Now()
	c.waitConverged(clConvergeLimit, "five nodes started at once")
	t.Logf("all ready %s after launch; converged %s after the last was ready",
		ready.Sub(start).Round(time.Millisecond), time.Since(ready).Round(time.Millisecond))

	all := ids(c.nodes)
	for _, n := range c.nodes {
		checkClusterStatus(t, n, all)
		if v := n.mustMetric("ron_cluster_members", `role="node"`, `state="alive"`); v != 5 {
			t.Errorf("%s: ron_cluster_members{state=alive} = %v, want 5", n.id, v)
		}
		for _, s := range []string{"dead", "left"} {
			if v, _, err := n.metricValue("ron_cluster_members", `role="node"`, `state="`+s+`"`); err != nil || v != 0 {
				t.Errorf("%s: ron_cluster_members{state=%s} = %v (%v), want 0", n.id, s, v, err)
			}
		}
	}
	checkMembersCLI(t, c.nodes[2], all)

	// No object is stored: the targets are the top 2 of all five, computed
	// here from the spec's score; nobody holds it.
	id := absentID(t, 0)
	want := hrwTop(2, all, objectKey(id))
	for _, n := range c.nodes {
		p, err := n.placement(id)
		if err != nil {
			t.Fatalf("%s: %v", n.id, err)
		}
		if !slices.Equal(p.Targets, want) || len(p.Holders) != 0 {
			t.Errorf("%s: placement of an absent object = %+v, want targets %v and no holder", n.id, p, want)
		}
	}
}

// checkClusterStatus checks n's top-level cluster object (docs/cluster.md §9): its own id,
// every member with its roles, no zone and an RFC 3339 since.
func checkClusterStatus(t *testing.T, n *clNode, all []string) {
	t.Helper()
	st, err := n.status()
	if err != nil {
		t.Fatalf("%s: %v", n.id, err)
	}
	if st.Cluster.NodeID != n.id || st.Cluster.Zone != "" {
		t.Errorf("%s: status cluster node_id %q zone %q", n.id, st.Cluster.NodeID, st.Cluster.Zone)
	}
	var got []string
	for _, m := range st.Cluster.Members {
		got = append(got, m.ID)
		roles := []string{"index", "storage"}
		if m.ID == "n1" {
			roles = []string{"gateway", "index", "storage"}
		}
		r := slices.Clone(m.Roles)
		slices.Sort(r)
		if !slices.Equal(r, roles) {
			t.Errorf("%s: member %s roles %v, want %v", n.id, m.ID, m.Roles, roles)
		}
		if _, err := time.Parse(time.RFC3339Nano, m.Since); err != nil {
			t.Errorf("%s: member %s since %q: %v", n.id, m.ID, m.Since, err)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, all) {
		t.Errorf("%s: status members %v, want %v", n.id, got, all)
	}
	if _, err := st.repair(); err != nil {
		t.Errorf("%s: %v", n.id, err)
	}
}

// checkMembersCLI runs `ron cluster members` against n's admin listener.
func checkMembersCLI(t *testing.T, n *clNode, all []string) {
	t.Helper()
	res := ron(t, cliOpts{}, "cluster", "members", "--admin", n.admin)
	if res.code != 0 {
		t.Errorf("ron cluster members: exit %d\nstdout: %s\nstderr: %s", res.code, res.stdout, res.stderr)
		return
	}
	for _, id := range all {
		if !strings.Contains(res.stdout, id) {
			t.Errorf("ron cluster members does not list %s:\n%s", id, res.stdout)
		}
	}
}

// TestClusterPartitionHeals: a node stopped with SIGSTOP (its gossip stops)
// past the dead-detection time is marked dead; a name written meanwhile is
// acknowledged by the two others (a majority of the control plane); after
// SIGCONT membership heals (all alive everywhere) and the log brings the
// name to the node's own index store.
func TestClusterPartitionHeals(t *testing.T) {
	c := startTestCluster(t, clusterOpts{nodes: 3})
	n1, n3 := c.nodes[0], c.nodes[2]
	name := "partition.example"
	c.mustPutName(n1, name, absentID(t, 1))

	n3.stop()
	c.waitDead(n3)
	rec := c.mustPutName(n1, name, absentID(t, 2))
	c.waitLocalName(c.nodes[1], name, rec, clCatchUpLimit)

	n3.cont()
	c.waitConverged(clHealLimit, "SIGCONT")
	c.waitLocalName(n3, name, rec, clCatchUpLimit)
}
