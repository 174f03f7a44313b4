package drr

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// Acquire waits for a scheduler slot for one request of tenant with the
// given weight (clamped to 1–1000) and cost (clamped to 1–64, see Cost).
// On success the caller holds the slot until it calls release (idempotent),
// which it must do once the response body is fully written.
//
// Errors: ErrTenantQueue (429) when the tenant's queue is full; ErrDropped
// (503) when the request was dropped as the oldest of a full queue;
// ErrQueueWait (503) after MaxWait or when ctx's deadline passes while
// waiting; ErrDraining (503) once Run has stopped. When ctx is canceled
// (client gone) the request is removed silently, counted in
// ron_tasks_canceled_total{kind="sched"}, and ctx.Err() is returned.
// ErrDropped and ErrQueueWait are reported to Options.OnDrop.
//
// A request that finds a free slot while nobody waits (and Run is running)
// gets it at once, without waiting for Run (see the package doc).
func (s *Scheduler) Acquire(ctx context.Context, tenant string, weight, cost int) (release func(), err error) {
	return s.AcquireBy(ctx, time.Time{}, tenant, weight, cost)
}

// AcquireBy is Acquire with deadline (zero: none) standing in for a ctx
// deadline: a request still waiting at deadline gets ErrQueueWait, and so
// does one arriving after it. It spares the caller a derived context, and
// the fast path any context at all.
func (s *Scheduler) AcquireBy(ctx context.Context, deadline time.Time, tenant string, weight, cost int) (release func(), err error) {
	if !deadline.IsZero() && !time.Now().Before(deadline) {
		return nil, s.gaveUp(ctx)
	}
	if rel := s.fastAcquire(ctx, tenant, cost); rel != nil {
		return rel, nil
	}
	w := &waiter{
		tenant: tenant,
		weight: clamp(weight, MinWeight, MaxWeight),
		cost:   clamp(cost, 1, MaxCost),
		ch:     make(chan error, 1),
	}
	limit := time.Now().Add(s.tunables().MaxWait)
	if !deadline.IsZero() && deadline.Before(limit) {
		limit = deadline
	}
	wctx, cancel := context.WithDeadline(ctx, limit)
	defer cancel()
	select {
	case s.arrive <- w:
	case <-s.done:
		return nil, ErrDraining
	case <-wctx.Done():
		return nil, s.gaveUp(ctx)
	}
	select {
	case err := <-w.ch:
		return s.answer(err)
	case <-s.done:
		// Run answered every queued request before closing done.
		return s.answer(<-w.ch)
	case <-wctx.Done():
		return s.abandon(ctx, w)
	}
}

// abandon withdraws w after its wait ended. An answer the scheduler gave
// before it saw the withdrawal wins, except a granted slot, which is given back.
func (s *Scheduler) abandon(ctx context.Context, w *waiter) (func(), error) {
	select {
	case s.leave <- w:
	case <-s.done:
	}
	select {
	case err := <-w.ch:
		if err != nil {
			return nil, err
		}
		s.releaser()()
	default:
	}
	return nil, s.gaveUp(ctx)
}

// gaveUp is the error of a wait that ended without an answer: the client went
// away (ctx canceled, silent), or MaxWait / the deadline passed.
func (s *Scheduler) gaveUp(ctx context.Context) error {
	if err := ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		s.m.canceled.Inc()
		return err
	}
	s.m.waitTimes.Inc()
	s.dropped()
	return ErrQueueWait
}

// answer turns the scheduler's answer into Acquire's results.
func (s *Scheduler) answer(err error) (func(), error) {
	if err != nil {
		return nil, err
	}
	return s.releaser(), nil
}

// releaser returns an idempotent function giving one slot back. It never
// blocks: the slot is freed at once, and Run is woken only when requests
// wait for it.
func (s *Scheduler) releaser() func() {
	var once atomic.Bool
	return func() {
		if once.Swap(true) {
			return
		}
		s.inflight.Add(-1)
		// Run queues a request (waiting+1) before it looks for a free slot
		// (take); this release frees its slot before it looks at waiting. So
		// either Run sees the free slot or this sees the waiter and wakes Run.
		if s.waiting.Load() > 0 {
			s.wake()
		}
	}
}

// take claims a slot when fewer than Slots are held; it never over-commits,
// whoever calls it (Run or the fast path).
func (s *Scheduler) take() bool {
	slots := int64(s.tunables().Slots)
	for {
		n := s.inflight.Load()
		if n >= slots {
			return false
		}
		if s.inflight.CompareAndSwap(n, n+1) {
			return true
		}
	}
}
