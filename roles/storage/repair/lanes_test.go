package repair

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/store"
)

// TestLanesUrgentFirst: workers take the urgent lane first.
func TestLanesUrgentFirst(t *testing.T) {
	l := newLanes(runtime.NewMetrics(nil), "storage", 4)
	for i := range 3 {
		if err := l.offer(Item{Kind: KindPush, ID: objectID(i), Target: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.put(context.Background(), Item{Kind: KindPush, ID: objectID(9), Target: "a", Urgent: true}); err != nil {
		t.Fatal(err)
	}
	it, ok := l.next(context.Background(), nil)
	if !ok || !it.Urgent || it.ID != objectID(9) {
		t.Fatalf("first item %+v", it)
	}
	for i := range 3 {
		if it, _ := l.next(context.Background(), nil); it.ID != objectID(i) {
			t.Fatalf("item %d is %v", i, it.ID.Prefix())
		}
	}
}

// TestLanesOverflowAndDuplicates: a full normal lane rejects (the caller
// skips), a pending item is not queued twice, and release frees both.
func TestLanesOverflowAndDuplicates(t *testing.T) {
	l := newLanes(runtime.NewMetrics(nil), "storage", 1)
	a := Item{Kind: KindPush, ID: objectID(1), Size: 10, Target: "a"}
	b := Item{Kind: KindPush, ID: objectID(2), Size: 20, Target: "a"}
	if err := l.put(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if err := l.put(context.Background(), a); !errors.Is(err, errDuplicate) {
		t.Fatalf("duplicate: %v", err)
	}
	if err := l.put(context.Background(), b); !errors.Is(err, runtime.ErrBusy) {
		t.Fatalf("overflow: %v", err)
	}
	if l.pendingBytes() != 10 || !l.busy(a.ID) || l.busy(b.ID) {
		t.Fatalf("pending %d", l.pendingBytes())
	}
	l.release(a)
	if l.pendingBytes() != 0 || l.busy(a.ID) {
		t.Fatalf("after release pending %d", l.pendingBytes())
	}
}

// TestUrgentLaneBlocks: the planner waits on a full urgent lane until a
// worker makes room, or its pass context ends.
func TestUrgentLaneBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLanes(runtime.NewMetrics(nil), "storage", 1)
		if err := l.put(context.Background(), Item{Kind: KindPush, ID: objectID(1), Target: "a", Urgent: true}); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			done <- l.put(context.Background(), Item{Kind: KindPush, ID: objectID(2), Target: "a", Urgent: true})
		}()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("put returned %v on a full urgent lane", err)
		default:
		}
		if _, ok := l.next(context.Background(), nil); !ok {
			t.Fatal("no item")
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { done <- l.put(ctx, Item{Kind: KindPush, ID: objectID(3), Target: "a", Urgent: true}) }()
		synctest.Wait()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) || l.busy(objectID(3)) {
			t.Fatalf("cancelled put: %v", err)
		}
	})
}

// TestPerTargetLimit: with four workers and repair_per_target 2, at most two
// pushes run against one target while another target's push proceeds.
func TestPerTargetLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := threeAlive()
		g := newRig(t, testConfig(), cluster.NewView("s", ms, longAgo), newFakeLocal())
		gate := make(chan struct{})
		var mu sync.Mutex
		running, peak := map[string]int{}, map[string]int{}
		g.exec.push = func(ctx context.Context, _ store.ID, base string, _ Meter) (bool, error) {
			mu.Lock()
			running[base]++
			peak[base] = max(peak[base], running[base])
			mu.Unlock()
			select {
			case <-gate:
			case <-ctx.Done():
			}
			mu.Lock()
			running[base]--
			mu.Unlock()
			return false, nil
		}
		g.start(t)
		for i, target := range []string{"a", "a", "b", "a", "a"} {
			g.QueuePush(objectID(i), 100, []string{target})
		}
		synctest.Wait()
		mu.Lock()
		if running["http://a"] != 2 || running["http://b"] != 1 {
			t.Fatalf("running %v", running)
		}
		mu.Unlock()
		close(gate)
		synctest.Wait()
		if peak["http://a"] != 2 || g.metric("repair_objects_total", "kind", "push", "result", "ok", "reason", "copied") != 5 {
			t.Fatalf("peak %v, metrics %v", peak, g.metrics.Values())
		}
		if p := g.Progress(); p.BytesPending != 0 || p.State != "idle" {
			t.Fatalf("progress %+v", p)
		}
	})
}

// TestWorkerOutcomes: failures are counted by reason and stop nothing; a
// push to a member that left is target_gone.
func TestWorkerOutcomes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, testConfig(), cluster.NewView("s", threeAlive(), longAgo), newFakeLocal())
		g.exec.push = func(_ context.Context, id store.ID, _ string, _ Meter) (bool, error) {
			switch id {
			case objectID(1):
				return false, Fail("target_full", errors.New("507"))
			case objectID(2):
				return true, nil
			}
			return false, errors.New("boom")
		}
		g.start(t)
		g.QueuePush(objectID(1), 1, []string{"a"})
		g.QueuePush(objectID(2), 1, []string{"a"})
		g.QueuePush(objectID(3), 1, []string{"a"})
		g.QueuePush(objectID(4), 1, []string{"gone"})
		synctest.Wait()
		want := map[[2]string]float64{
			{"error", "target_full"}: 1, {"ok", "existing"}: 1, {"error", "error"}: 1, {"error", "target_gone"}: 1,
		}
		for k, v := range want {
			if got := g.metric("repair_objects_total", "kind", "push", "result", k[0], "reason", k[1]); got != v {
				t.Fatalf("%v = %v, want %v", k, got, v)
			}
		}
		if p := g.Progress(); p.Errors != 3 {
			t.Fatalf("errors %d", p.Errors)
		}
	})
}

// TestWorkersFollowReload: lowering K retires workers, raising it spawns
// them again.
func TestWorkersFollowReload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newRig(t, testConfig(), cluster.NewView("s", threeAlive(), longAgo), newFakeLocal())
		g.start(t)
		count := func() int {
			g.mu.Lock()
			defer g.mu.Unlock()
			n := 0
			for _, w := range g.workers {
				if w {
					n++
				}
			}
			return n
		}
		synctest.Wait()
		cfg := testConfig()
		cfg.Workers = 1
		g.Apply(cfg)
		synctest.Wait()
		if n := count(); n != 1 {
			t.Fatalf("%d workers after K=1", n)
		}
		cfg.Workers = 3
		g.Apply(cfg)
		synctest.Wait()
		if n := count(); n != 3 {
			t.Fatalf("%d workers after K=3", n)
		}
	})
}
