package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
)

// TestClusterNamesOnTheLog (docs/cluster.md §14): three servers. A write
// through a follower is acknowledged and reaches every node's own store.
// With the leader killed (kill -9) the others still answer reads at once,
// elect a leader among themselves and acknowledge writes; the old leader
// returns from its disk with every acknowledged write, joins the group it
// left (it does not bootstrap another) and catches up. With two of three
// gone the last one never acknowledges (503 no_quorum); after all three
// restart from disk every acknowledged write is there; a server restarted
// on an emptied disk (same node id) catches up from the others.
func TestClusterNamesOnTheLog(t *testing.T) {
	c := startTestCluster(t, clusterOpts{nodes: 3})
	name := "log.example"
	leader := c.waitLeader(c.nodes, "start")
	follower := c.nodes[0]
	if follower == leader {
		follower = c.nodes[1]
	}
	rec1 := c.mustPutName(follower, name, absentID(t, 1))
	for _, n := range c.nodes {
		c.waitLocalName(n, name, rec1, clCatchUpLimit)
	}

	leader.kill9()
	var rest []*clNode
	for _, n := range c.nodes {
		if n != leader {
			rest = append(rest, n)
			if r, got, err := getName(n, name, true); err != nil || r.status != http.StatusOK || got.Version != rec1.Version {
				t.Errorf("GET /names/%s on %s right after the leader's kill: %d %s (%v)", name, n.id, r.status, r.body, err)
			}
		}
	}
	next := c.waitLeader(rest, "the leader's kill")
	rec2 := c.mustPutName(rest[0], name, absentID(t, 2))
	if rec2.Version != rec1.Version+1 {
		t.Errorf("PUT after the leader's kill: version %d, want %d", rec2.Version, rec1.Version+1)
	}

	c.restart(leader)
	if got := c.waitLeader(c.nodes, "the old leader's return"); !slices.Contains(rest, got) && got != leader {
		t.Errorf("leader after the return: %s", got.id)
	}
	c.waitLocalName(leader, name, rec2, clCatchUpLimit)
	st, err := leader.status()
	if err != nil || st.ControlPlane == nil || len(st.ControlPlane.Servers) != 3 {
		t.Fatalf("the old leader's control plane after its return: %+v %v", st.ControlPlane, err)
	}

	survivor := next
	for _, n := range c.nodes {
		if n != survivor {
			n.kill9()
		}
	}
	r, _, err := c.putName(survivor, name, absentID(t, 3))
	if err != nil {
		t.Fatalf("PUT /names/%s on the last server: %v", name, err)
	}
	wantError(t, "PUT on the last of three servers", r, http.StatusServiceUnavailable, "no_quorum")
	if r.header.Get("Retry-After") == "" {
		t.Errorf("no_quorum without Retry-After: %v", r.header)
	}

	survivor.kill9()
	c.launchAll("restarting all three from disk")
	c.waitLeader(c.nodes, "restarting all three from disk")
	// The refused write's outcome was unknown to its client: the last
	// server may have appended it, and a later leader may commit it. Either
	// way every node ends with the same history, holding version 2.
	for _, n := range c.nodes {
		waitFor(t, clCatchUpLimit, clPollEvery, n.id+" to hold every acknowledged write", func() (bool, string) {
			r, got, err := getName(n, name, true)
			ok := err == nil && r.status == http.StatusOK && (got.Version == rec2.Version && got.B3 == rec2.B3 ||
				got.Version == rec2.Version+1 && got.B3 == absentID(t, 3))
			return ok, fmt.Sprintf("%d %.200s %v", r.status, r.body, err)
		})
	}

	wiped := c.nodes[2]
	wiped.kill9()
	c.restartEmpty(wiped)
	c.waitLeader(c.nodes, "a server back on an emptied disk")
	waitFor(t, clCatchUpLimit, clPollEvery, wiped.id+" on an emptied disk to catch up", func() (bool, string) {
		r, got, err := getName(wiped, name, true)
		return err == nil && r.status == http.StatusOK && got.Version >= rec2.Version, fmt.Sprintf("%d %.200s %v", r.status, r.body, err)
	})
}
