package runtime

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

func TestQueuePolicies(t *testing.T) {
	tests := []struct {
		policy      Policy
		push        int // items 1..push, pushed with Offer semantics via Push
		wantErrs    int // pushes that failed with ErrBusy
		wantItems   []int
		wantDropped float64
	}{
		{Reject, 5, 2, []int{1, 2, 3}, 0},
		{DropOldest, 5, 0, []int{3, 4, 5}, 2},
		{Block, 3, 0, []int{1, 2, 3}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.policy.String(), func(t *testing.T) {
			set := metrics.NewSet()
			var evicted []int
			q := NewQueue(NewMetrics(set), "storage", "work", 3, tt.policy, OnDrop(func(v int) { evicted = append(evicted, v) }))
			errs := 0
			for i := 1; i <= tt.push; i++ {
				if err := q.Push(context.Background(), i); errors.Is(err, ErrBusy) {
					errs++
				} else if err != nil {
					t.Fatal(err)
				}
			}
			if errs != tt.wantErrs {
				t.Errorf("busy errors = %d, want %d", errs, tt.wantErrs)
			}
			if len(evicted) != int(tt.wantDropped) {
				t.Errorf("OnDrop got %v", evicted)
			}
			got := scrape(t, set)
			for series, want := range map[string]float64{
				`ron_queue_depth{role="storage",queue="work"}`:         3,
				`ron_queue_capacity{role="storage",queue="work"}`:      3,
				`ron_queue_dropped_total{role="storage",queue="work"}`: tt.wantDropped,
			} {
				if got[series] != want {
					t.Errorf("%s = %v, want %v", series, got[series], want)
				}
			}
			for _, want := range tt.wantItems {
				if v, ok := q.TryPop(); !ok || v != want {
					t.Errorf("TryPop = %v, %v; want %v", v, ok, want)
				}
			}
			if q.Len() != 0 || metric(t, set, `ron_queue_depth{role="storage",queue="work"}`) != 0 {
				t.Error("queue not empty after draining")
			}
		})
	}
}

func TestQueueOfferReturnsDropped(t *testing.T) {
	q := NewQueue[string](nil, "edge", "fill", 1, DropOldest)
	if _, dropped, err := q.Offer("a"); dropped || err != nil {
		t.Fatal(dropped, err)
	}
	old, dropped, err := q.Offer("b")
	if !dropped || old != "a" || err != nil {
		t.Fatalf("Offer = %q, %v, %v", old, dropped, err)
	}
	if q.Cap() != 1 || q.Policy() != DropOldest {
		t.Fatal("Cap/Policy")
	}
	r := NewQueue[string](nil, "edge", "r", 1, Block)
	_, _, _ = r.Offer("a")
	if _, _, err := r.Offer("b"); !errors.Is(err, ErrBusy) {
		t.Fatalf("Offer on full block queue = %v, want ErrBusy", err)
	}
}

func TestQueueBlockDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue[int](nil, "index", "lookups", 1, Block)
		ctx := context.Background()
		if err := q.Push(ctx, 1); err != nil {
			t.Fatal(err)
		}
		dctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := q.Push(dctx, 2); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Push on full queue = %v, want deadline exceeded", err)
		}
		if el := time.Since(start); el != 500*time.Millisecond {
			t.Fatalf("blocked %v, want 500ms", el)
		}
		// A consumer freeing room lets a blocked push through.
		done := make(chan error)
		go func() { done <- q.Push(ctx, 3) }() // blocked pusher, owned by this test
		synctest.Wait()
		if v, _ := q.Pop(ctx); v != 1 {
			t.Fatalf("Pop = %d", v)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// Pop on an empty queue honours its deadline too.
		q.TryPop()
		pctx, cancel2 := context.WithTimeout(ctx, time.Second)
		defer cancel2()
		if _, err := q.Pop(pctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Pop = %v", err)
		}
	})
}

func TestQueueClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q := NewQueue[int](nil, "storage", "work", 2, Block)
		_ = q.Push(ctx, 1)
		_ = q.Push(ctx, 2)
		blocked := make(chan error)
		go func() { blocked <- q.Push(ctx, 3) }() // blocked pusher, owned by this test
		waiting := make(chan error)
		empty := NewQueue[int](nil, "storage", "empty", 1, Reject)
		go func() { _, err := empty.Pop(ctx); waiting <- err }() // blocked popper, owned by this test
		synctest.Wait()
		q.Close()
		empty.Close()
		q.Close() // idempotent
		if err := <-blocked; !errors.Is(err, ErrClosed) {
			t.Fatalf("blocked Push = %v, want ErrClosed", err)
		}
		if err := <-waiting; !errors.Is(err, ErrClosed) {
			t.Fatalf("blocked Pop = %v, want ErrClosed", err)
		}
		if err := q.Push(ctx, 4); !errors.Is(err, ErrClosed) {
			t.Fatalf("Push after Close = %v", err)
		}
		for _, want := range []int{1, 2} {
			if v, err := q.Pop(ctx); err != nil || v != want {
				t.Fatalf("Pop = %d, %v; want %d", v, err, want)
			}
		}
		if _, err := q.Pop(ctx); !errors.Is(err, ErrClosed) {
			t.Fatalf("Pop on closed empty queue = %v", err)
		}
		if !q.Closed() {
			t.Fatal("Closed() = false")
		}
	})
}

func TestParsePolicy(t *testing.T) {
	for _, p := range []Policy{Reject, DropOldest, Block} {
		if got, err := ParsePolicy(p.String()); err != nil || got != p {
			t.Errorf("ParsePolicy(%s) = %v, %v", p, got, err)
		}
	}
	if _, err := ParsePolicy("lifo"); err == nil {
		t.Error("ParsePolicy(lifo) accepted")
	}
}

func TestNewQueueRejectsZeroCapacity(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("capacity 0 accepted")
		}
	}()
	NewQueue[int](nil, "r", "q", 0, Reject)
}

// TestQueueConcurrentRejectBounded: many producers and consumers under
// -race; the queue never holds more than its capacity, every accepted
// item is popped exactly once.
func TestQueueConcurrentRejectBounded(t *testing.T) {
	const capacity, producers, consumers, perProducer = 8, 8, 4, 2000
	q := NewQueue[int](nil, "gateway", "work", capacity, Reject)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var accepted, popped, overfull atomic.Int64
	var prod, cons sync.WaitGroup
	for p := range producers {
		prod.Add(1)
		go func() { // producer p, owned by this test
			defer prod.Done()
			for i := range perProducer {
				if err := q.Push(ctx, p*perProducer+i); err == nil {
					accepted.Add(1)
				} else if !errors.Is(err, ErrBusy) {
					t.Error(err)
				}
				if n := q.Len(); n > capacity {
					overfull.Store(int64(n))
				}
			}
		}()
	}
	seen := make([]atomic.Bool, producers*perProducer)
	for range consumers {
		cons.Add(1)
		go func() { // consumer, owned by this test; ends on ErrClosed
			defer cons.Done()
			for {
				v, err := q.Pop(ctx)
				if err != nil {
					return
				}
				if seen[v].Swap(true) {
					t.Errorf("item %d popped twice", v)
				}
				popped.Add(1)
			}
		}()
	}
	prod.Wait()
	q.Close()
	cons.Wait()
	if popped.Load() != accepted.Load() {
		t.Fatalf("popped %d, accepted %d", popped.Load(), accepted.Load())
	}
	if n := overfull.Load(); n != 0 {
		t.Fatalf("queue held %d > capacity %d", n, capacity)
	}
}
