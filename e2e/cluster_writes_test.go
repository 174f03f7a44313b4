package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
)

// TestClusterWrites (docs/cluster.md §13.2): 200 objects of 1 KiB–4 MiB
// written through every node's storage listener and through the gateway;
// each reply has copies 2. Once repair settles, each object sits on
// exactly its top-2 members: the placement endpoint's holders equal its
// targets, the targets equal the spec's score computed here, and the
// nodes' inventories agree. Every node's last pass then finds nothing
// under-replicated and no excess copy.
func TestClusterWrites(t *testing.T) {
	c := startTestCluster(t, clusterOpts{nodes: 4})
	objs := genObjects(1, 200, 1<<10, 4<<20)
	bases := []string{c.gatewayBase()}
	for _, n := range c.nodes {
		bases = append(bases, n.storageBase())
	}
	c.writeAll(objs, bases, 4)

	total := totalBytes(objs)
	limit := clRepairAfter + 3*clRepairInterval + 2*time.Duration(float64(total)/clDefaultPace*float64(time.Second)) + 30*time.Second
	c.waitPlaced(objs, c.nodes, limit)
	c.checkInventoriesMatch(objs, c.nodes)
	c.waitRepairClean(c.nodes, 3*clRepairInterval+10*time.Second, true)
	for i := 0; i < len(objs); i += 10 {
		if err := readBack(c.gatewayBase(), objs[i]); err != nil {
			t.Error(err)
		}
	}
}

// writeAll writes objs with `workers` concurrent writers, object i through
// bases[i % len(bases)], and fails unless every reply has copies 2.
func (c *testCluster) writeAll(objs []clObject, bases []string, workers int) {
	c.t.Helper()
	var g errgroup.Group
	for w := range workers {
		g.Go(func() error {
			for i := w; i < len(objs); i += workers {
				if err := c.writeTwo(bases[i%len(bases)], objs[i]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		c.t.Fatal(err)
	}
}

// waitPlaced polls until every object's placement, asked of the members in
// turn, has holders equal to targets and targets equal to the spec's top 2
// of members (all of them alive).
func (c *testCluster) waitPlaced(objs []clObject, members []*clNode, limit time.Duration) {
	c.t.Helper()
	all := ids(members)
	pending := slices.Clone(objs)
	waitFor(c.t, limit, clPollEvery, fmt.Sprintf("all %d objects to sit on exactly their top-2 members", len(objs)), func() (bool, string) {
		var left []clObject
		var last string
		for i, o := range pending {
			n := members[i%len(members)]
			p, err := n.placement(o.id)
			want := hrwTop(2, all, objectKey(o.id))
			switch {
			case err != nil:
				last = fmt.Sprintf("%s: %v", n.id, err)
			case !slices.Equal(p.Targets, want):
				c.t.Fatalf("placement of %s on %s: targets %v, want %v (the top 2 of %v by the docs/cluster.md §3 score)", o.id, n.id, p.Targets, want, all)
			case !slices.Equal(p.Holders, p.Targets):
				last = fmt.Sprintf("%s (%d bytes): targets %v holders %v", o.id, len(o.data), p.Targets, p.Holders)
			default:
				continue
			}
			left = append(left, o)
		}
		pending = left
		return len(left) == 0, fmt.Sprintf("%d objects not placed, e.g. %s", len(left), last)
	})
}

// checkInventoriesMatch checks, through the nodes' own inventories, that
// each object is held by exactly its top-2 members.
func (c *testCluster) checkInventoriesMatch(objs []clObject, members []*clNode) {
	c.t.Helper()
	got, err := c.holdersByInventory(members, objs)
	if err != nil {
		c.t.Fatal(err)
	}
	bad := 0
	for _, o := range objs {
		if w := hrwTop(2, ids(members), objectKey(o.id)); !slices.Equal(got[o.id], w) {
			if bad++; bad <= 5 {
				c.t.Errorf("inventories: %s held by %v, want %v", o.id, got[o.id], w)
			}
		}
	}
	if bad > 5 {
		c.t.Errorf("… %d objects in all not on exactly their top-2 members", bad)
	}
}

// waitRepairClean polls until every node in ns reports, for a pass that
// began after this call, nothing under-replicated (status) and, with
// noExcess, no excess copy (ron_repair_excess_objects).
func (c *testCluster) waitRepairClean(ns []*clNode, limit time.Duration, noExcess bool) {
	c.t.Helper()
	start := map[string]int64{}
	for _, n := range ns {
		start[n.id] = c.repairOf(n).Pass
	}
	what := fmt.Sprintf("under_replicated 0 on %v", ids(ns))
	if noExcess {
		what += " and no excess copy"
	}
	waitFor(c.t, limit, clPollEvery, what, func() (bool, string) {
		var seen []string
		ok := true
		for _, n := range ns {
			r := c.repairOf(n)
			good := r.Pass >= start[n.id]+2 && r.UnderReplicated == 0
			s := fmt.Sprintf("%s pass %d (from %d) under_replicated %d last_error %q", n.id, r.Pass, start[n.id], r.UnderReplicated, r.LastError)
			if noExcess {
				excess, _, err := n.metricValue("ron_repair_excess_objects", `role="storage"`)
				good = good && err == nil && excess == 0
				s += fmt.Sprintf(" excess %v %v", excess, err)
			}
			ok = ok && good
			seen = append(seen, s)
		}
		return ok, strings.Join(seen, "; ")
	})
}

// repairOf reads n's details.repair and fails the test when it cannot.
func (c *testCluster) repairOf(n *clNode) repairStatus {
	c.t.Helper()
	st, err := n.status()
	if err != nil {
		c.t.Fatalf("%s: %v", n.id, err)
	}
	r, err := st.repair()
	if err != nil {
		c.t.Fatalf("%s: %v", n.id, err)
	}
	return r
}
