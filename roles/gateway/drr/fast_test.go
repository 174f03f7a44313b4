package drr

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestFastPathNeverOvercommits: many handlers racing for few slots, some
// taking the fast path and some queueing, never hold more than Slots at
// once, and every queued one is woken (a lost wake-up would leave it
// waiting until MaxWait, and fail).
func TestFastPathNeverOvercommits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const slots, workers, rounds = 3, 48, 200
		s := start(t, Options{Slots: slots, QueueCap: 4096, TenantQueueCap: 4096, MaxWait: time.Hour})
		var held, peak atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for i := range workers {
			wg.Go(func() {
				tenant := string(rune('a' + i%6))
				for range rounds {
					rel, err := s.Acquire(context.Background(), tenant, 1+i%3, 1)
					if err != nil {
						errs <- err
						return
					}
					n := held.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					if in := s.InFlight(); in > slots {
						errs <- errors.New("in-flight count above Slots")
					}
					held.Add(-1)
					rel()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if peak.Load() > slots || peak.Load() == 0 {
			t.Fatalf("peak holders %d with %d slots", peak.Load(), slots)
		}
		synctest.Wait()
		if s.InFlight() != 0 || s.Waiting() != 0 {
			t.Fatalf("after all releases: inflight %d waiting %d", s.InFlight(), s.Waiting())
		}
		if got := metric(s, `ron_gateway_drr_dispatched_cost_total{role="gateway",tenant="a"}`); got != workers/6*rounds {
			t.Fatalf("dispatched cost of a = %v, want %d", got, workers/6*rounds)
		}
	})
}

// TestFastPathTakesFreeSlots: once Run knows a tenant, its requests take
// free slots without Run, counted in the dispatched cost and, at the next
// publish, in the shares.
func TestFastPathTakesFreeSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := start(t, Options{Slots: 2})
		mustAcquire(t, s, "a")() // through Run: learned
		mustAcquire(t, s, "b")()
		if _, ok := s.fast.Load("a"); !ok {
			t.Fatal("tenant a not learned by Run")
		}
		for range 3 {
			rel, err := s.Acquire(context.Background(), "a", 1, 3)
			if err != nil {
				t.Fatal(err)
			}
			if s.InFlight() != 1 {
				t.Fatalf("fast grant: inflight %d", s.InFlight())
			}
			rel()
			rel() // idempotent
			if s.InFlight() != 0 {
				t.Fatalf("fast release: inflight %d", s.InFlight())
			}
		}
		rel, _ := s.Acquire(context.Background(), "b", 1, 1)
		rel()
		if got := metric(s, `ron_gateway_drr_dispatched_cost_total{role="gateway",tenant="a"}`); got != 10 {
			t.Fatalf("dispatched cost of a = %v, want 10", got)
		}
		time.Sleep(epochLength)
		synctest.Wait()
		if a, b := metric(s, `ron_gateway_drr_share{role="gateway",tenant="a"}`), metric(s, `ron_gateway_drr_share{role="gateway",tenant="b"}`); a != 10.0/12 || b != 2.0/12 {
			t.Fatalf("shares a %v b %v, want 10/12 and 2/12", a, b)
		}
		if _, ok := s.fast.Load("a"); ok {
			t.Fatal("the fast path's tenants were not forgotten at the epoch")
		}
	})
}

// TestFastPathYieldsToWaiters: while requests wait, newcomers queue behind
// them, and a released slot goes to the waiting one.
func TestFastPathYieldsToWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := start(t, Options{Slots: 1})
		mustAcquire(t, s, "c")()
		hold := mustAcquire(t, s, "a")
		b := waitFor(context.Background(), s, "b", 1, 1)
		if b.done() || s.Waiting() != 1 {
			t.Fatalf("b not queued: waiting %d", s.Waiting())
		}
		hold()
		c := waitFor(context.Background(), s, "c", 1, 1) // c is known to the fast path, yet queues
		if !b.done() || b.err != nil || c.done() || s.Waiting() != 1 {
			t.Fatalf("b %v/%v, c done %v, waiting %d", b.done(), b.err, c.done(), s.Waiting())
		}
		b.rel()
		synctest.Wait()
		if !c.done() || c.err != nil {
			t.Fatalf("c after b: %v/%v", c.done(), c.err)
		}
		c.rel()
	})
}

// TestNoSlotBeforeRun: without Run there is no fast path either.
func TestNoSlotBeforeRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Options{Slots: 4, MaxWait: time.Second})
		if _, err := s.Acquire(context.Background(), "a", 1, 1); !errors.Is(err, ErrQueueWait) || s.InFlight() != 0 {
			t.Fatalf("before Run: %v, inflight %d", err, s.InFlight())
		}
	})
}

func TestAcquireByDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := start(t, Options{Slots: 1})
		if _, err := s.AcquireBy(context.Background(), time.Now(), "a", 1, 1); !errors.Is(err, ErrQueueWait) {
			t.Fatalf("deadline passed on arrival: %v", err)
		}
		hold := mustAcquire(t, s, "a")
		start := time.Now()
		_, err := s.AcquireBy(context.Background(), start.Add(500*time.Millisecond), "b", 1, 1)
		if !errors.Is(err, ErrQueueWait) || time.Since(start) != 500*time.Millisecond {
			t.Fatalf("waiting past the deadline: %v after %v", err, time.Since(start))
		}
		rel, err := s.AcquireBy(context.Background(), time.Time{}, "a", 1, 1) // no deadline: MaxWait
		if !errors.Is(err, ErrQueueWait) || time.Since(start) != 500*time.Millisecond+DefaultMaxWait {
			t.Fatalf("no deadline: %v after %v", err, time.Since(start))
		}
		_ = rel
		hold()
		if rel, err = s.AcquireBy(context.Background(), time.Now().Add(time.Second), "a", 1, 1); err != nil {
			t.Fatal(err)
		}
		rel()
		if got := metric(s, `ron_io_timeouts_total{role="gateway",op="queue_wait"}`); got != 3 {
			t.Fatalf("queue_wait timeouts %v, want 3", got)
		}
	})
}
