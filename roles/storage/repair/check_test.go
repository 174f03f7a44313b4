package repair

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/store"
)

// TestCheckObject: an admin check pulls an object this node should hold
// but lacks (sources: T first, then the other alive members), and pushes a
// held object's missing copies urgently.
func TestCheckObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := threeAlive()
		lacking := idsWhere(1, 2, ms, func(top []string) bool { return contains(top, "s") && top[0] != "s" })[0]
		held := idsWhere(1, 2, ms, func(top []string) bool { return top[0] == "s" })[0]
		g := newRig(t, testConfig(), cluster.NewView("s", ms, longAgo), newFakeLocal(held))
		var sources []string
		g.exec.pull = func(_ context.Context, _ store.ID, src []string, _ Meter) error {
			sources = src
			return nil
		}
		g.start(t)
		if err := g.CheckObject(lacking.ID); err != nil {
			t.Fatal(err)
		}
		if err := g.CheckObject(held.ID); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if len(g.exec.pulls) != 1 || g.exec.pulls[0] != lacking.ID || len(sources) != 2 {
			t.Fatalf("pulls %v from %v", g.exec.pulls, sources)
		}
		other := "http://a"
		if sources[0] == other {
			other = "http://b"
		}
		if slices.Contains(sources, "http://s") || sources[1] != other {
			t.Fatalf("sources %v", sources)
		}
		if len(g.exec.pushes) != 1 || g.exec.pushes[0].id != held.ID {
			t.Fatalf("pushes %v", g.exec.pushes)
		}
		if g.metric("repair_objects_total", "kind", "pull", "result", "ok", "reason", "copied") != 1 {
			t.Fatalf("metrics %v", g.metrics.Values())
		}
	})
}

// TestQueuePullAfterCorruption: a quarantine hook's pull runs urgently.
func TestQueuePullAfterCorruption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, testConfig(), cluster.NewView("s", threeAlive(), longAgo), newFakeLocal())
		gate := make(chan struct{})
		g.exec.pull = func(context.Context, store.ID, []string, Meter) error { <-gate; return nil }
		g.start(t)
		g.QueuePull(objectID(7))
		synctest.Wait()
		g.QueuePull(objectID(7)) // still in flight: not queued again
		close(gate)
		synctest.Wait()
		if len(g.exec.pulls) != 1 || g.exec.pulls[0] != objectID(7) {
			t.Fatalf("pulls %v", g.exec.pulls)
		}
	})
}
