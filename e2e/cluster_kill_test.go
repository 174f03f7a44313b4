package e2e

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestClusterKill9DuringWrites (docs/cluster.md §13.3, issue 7 "Done
// means": passes 10 times in a row with -count=10): four nodes, a write
// load through every node and the gateway, and one storage node killed with
// SIGKILL while it runs. Every acknowledged object is readable at once
// through the gateway (and `ron get`); then each has two alive copies and
// every survivor's pass finds nothing under-replicated within repair_after
// + 3 × repair_interval + 2 × (bytes the victim held ÷ pace) + 30 s of the
// kill.
func TestClusterKill9DuringWrites(t *testing.T) {
	c := startTestCluster(t, clusterOpts{nodes: 4})
	victim, survivors := c.nodes[3], c.nodes[:3]
	objs := genObjects(3, 160, 1<<10, 256<<10)
	bases := []string{c.gatewayBase()}
	for _, n := range c.nodes {
		bases = append(bases, n.storageBase())
	}
	load := c.startLoad(objs, bases, 4)
	waitFor(t, time.Minute, pollEvery, "40 acknowledged writes before the kill", func() (bool, string) {
		return len(load.ackedNow()) >= 40, load.summary()
	})
	before := load.ackedNow()
	victim.kill9()
	killed := time.Now()
	c.readAllAtOnce(before, "acknowledged before the kill", load)
	if err := load.wait(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	acked := load.ackedNow()
	t.Logf("write load: %s", load.summary())
	if len(load.badCopy) > 0 {
		t.Errorf("acknowledged writes without copies 2 (docs/cluster.md §4.3): %v", load.badCopy)
	}
	c.readAllAtOnce(acked, "acknowledged by the end of the load", load)
	c.ronGetSample(acked, victim, survivors, 5)

	held, err := dirObjectBytes(victim)
	if err != nil {
		t.Fatal(err)
	}
	limit := clRepairAfter + 3*clRepairInterval + 2*time.Duration(float64(held)/clDefaultPace*float64(time.Second)) + 30*time.Second
	t.Logf("the victim held %d bytes; repair bound %s from the kill", held, limit.Round(time.Millisecond))
	deadline := killed.Add(limit)
	c.waitAliveCopies(acked, survivors, time.Until(deadline))
	c.waitRepairClean(survivors, time.Until(deadline), false)
	t.Logf("repaired %s after the kill", time.Since(killed).Round(time.Millisecond))
	c.checkPlacementAlive(acked, survivors, victim)
}

// readAllAtOnce reads every object once through the gateway (no retry,
// no wait) and reports each failure, with where the object is and how long
// it then took to become readable (diagnosis only: the check is the first
// read).
func (c *testCluster) readAllAtOnce(objs []clObject, what string, load *writeLoad) {
	c.t.Helper()
	var bad []string
	var late []clObject
	for _, o := range objs {
		if err := readBack(c.gatewayBase(), o); err != nil {
			age := load.ackAge(o.id).Round(time.Millisecond)
			bad = append(bad, fmt.Sprintf("%v (acknowledged %s before) [%s]", err, age, c.whereIs(o.id)))
			late = append(late, o)
		}
	}
	if len(bad) == 0 {
		return
	}
	c.t.Errorf("%d of %d objects %s not readable through the gateway right after the kill: %s",
		len(bad), len(objs), what, strings.Join(bad[:min(len(bad), 5)], "; "))
	start := time.Now()
	for _, o := range late {
		ok := pollUntilEvery(10*time.Second, 50*time.Millisecond, func() bool { return readBack(c.gatewayBase(), o) == nil })
		c.t.Logf("  %s: readable through the gateway again: %t, %s after the first failed read pass", o.id, ok, time.Since(start).Round(time.Millisecond))
	}
}

// ronGetSample runs `ron get` for up to count objects the victim held,
// each against a survivor that lacks it (so the read goes through the
// index's providers and must skip the dead one).
func (c *testCluster) ronGetSample(objs []clObject, victim *clNode, survivors []*clNode, count int) {
	c.t.Helper()
	done := 0
	for _, o := range objs {
		if done == count {
			return
		}
		if _, err := os.Stat(victim.objectPath(o.id)); err != nil {
			continue
		}
		server := survivors[done%len(survivors)]
		for _, s := range survivors {
			if r, err := clReq(clObserveLimit, http.MethodHead, s.storageBase()+"/o/"+o.id, nil, nil); err == nil && r.status == http.StatusNotFound {
				server = s
				break
			}
		}
		pre, _ := clGet("http://" + server.index + "/providers/" + o.id) // diagnosis: what ron get will be told
		if err := ronGet(c.t, server, server, o); err != nil {
			c.t.Errorf("%v; %s's GET /providers just before answered %d %.200s; afterwards: [%s]", err, server.id, pre.status, pre.body, c.whereIs(o.id))
			start := time.Now()
			ok := pollUntilEvery(10*time.Second, 500*time.Millisecond, func() bool { return ronGet(c.t, server, server, o) == nil })
			c.t.Logf("  ron get of %s passes again: %t, %s later", o.id, ok, time.Since(start).Round(time.Millisecond))
		}
		done++
	}
}

// waitAliveCopies polls the survivors' inventories until every object is
// held by at least two of them.
func (c *testCluster) waitAliveCopies(objs []clObject, survivors []*clNode, limit time.Duration) {
	c.t.Helper()
	waitFor(c.t, limit, clPollEvery, fmt.Sprintf("all %d acknowledged objects to have 2 alive copies", len(objs)), func() (bool, string) {
		got, err := c.holdersByInventory(survivors, objs)
		if err != nil {
			return false, err.Error()
		}
		short, example := 0, ""
		for _, o := range objs {
			if len(got[o.id]) < 2 {
				short++
				example = fmt.Sprintf("%s held by %v", o.id, got[o.id])
			}
		}
		return short == 0, fmt.Sprintf("%d objects with fewer than 2 alive copies, e.g. %s", short, example)
	})
}

// checkPlacementAlive checks, through the placement endpoint, that each
// object's holders are alive members, at least two, and that the dead
// member is no target once it left P.
func (c *testCluster) checkPlacementAlive(objs []clObject, survivors []*clNode, dead *clNode) {
	c.t.Helper()
	alive := ids(survivors)
	for i, o := range objs {
		n := survivors[i%len(survivors)]
		p, err := n.placement(o.id)
		if err != nil {
			c.t.Fatalf("%s: %v", n.id, err)
		}
		holders := slices.DeleteFunc(slices.Clone(p.Holders), func(h string) bool { return !slices.Contains(alive, h) })
		if len(holders) != len(p.Holders) || len(holders) < 2 || slices.Contains(p.Targets, dead.id) {
			c.t.Errorf("placement of %s on %s: %+v (alive %v, dead %s)", o.id, n.id, p, alive, dead.id)
		}
	}
}

// TestClusterRestartWithinRepairAfter (docs/cluster.md §13.4): a node killed and back
// within repair_after causes no repair traffic: every node's
// ron_repair_bytes_total{phase="executed"} stays where it was through
// repair_after + 3 × repair_interval after the kill and several passes.
func TestClusterRestartWithinRepairAfter(t *testing.T) {
	c := startTestCluster(t, clusterOpts{nodes: 3})
	objs := genObjects(4, 30, 1<<10, 64<<10)
	c.writePlaced(objs)
	c.waitPlaced(objs, c.nodes, 10*time.Second)
	base := map[string]float64{}
	for _, n := range c.nodes {
		base[n.id] = n.executedBytes()
	}

	n3 := c.nodes[2]
	n3.kill9()
	killed := time.Now()
	c.waitDead(n3)
	c.restart(n3)
	c.waitConverged(clHealLimit, "restart")
	if back := time.Since(killed); back >= clRepairAfter {
		t.Fatalf("test premise: the node was seen dead and back only %s after the kill, not within repair_after (%s)", back.Round(time.Millisecond), clRepairAfter)
	}
	base[n3.id] = 0 // a new process counts from 0
	passes := map[string]int64{}
	for _, n := range c.nodes {
		passes[n.id] = c.repairOf(n).Pass
	}
	quiet := clRepairAfter + 3*clRepairInterval + 2*time.Second
	waitFor(t, quiet+30*time.Second, clPollEvery, "repair_after + 3 passes without repair traffic", func() (bool, string) {
		var seen []string
		enough := time.Since(killed) >= quiet
		for _, n := range c.nodes {
			if d := n.executedBytes() - base[n.id]; d != 0 {
				t.Fatalf("%s executed %v repair bytes %s after a restart within repair_after (want 0, docs/cluster.md §5 and docs/cluster.md §12)", n.id, d, time.Since(killed).Round(time.Millisecond))
			}
			p := c.repairOf(n).Pass
			enough = enough && p >= passes[n.id]+3
			seen = append(seen, fmt.Sprintf("%s pass %d (from %d)", n.id, p, passes[n.id]))
		}
		return enough, fmt.Sprintf("%s after the kill; %s", time.Since(killed).Round(time.Millisecond), strings.Join(seen, ", "))
	})
	c.waitPlaced(objs, c.nodes, 10*time.Second)
}

// writePlaced writes each object through the storage listener of its
// best-scored member, so the coordinator's copy is one of its top 2 and no
// repair is ever needed.
func (c *testCluster) writePlaced(objs []clObject) {
	c.t.Helper()
	all := ids(c.nodes)
	for _, o := range objs {
		c.mustWrite(c.byID(hrwRank(all, objectKey(o.id))[0]).storageBase(), o)
	}
}
