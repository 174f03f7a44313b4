package drr

import (
	"context"
	"errors"
	"time"
)

// ErrRunTwice is returned at once by every call of Run but the first, also
// after the first has returned: a Scheduler runs once. A stopped Scheduler
// answers every Acquire with ErrDraining for good; make a new one to start
// over.
var ErrRunTwice = errors.New("drr: Run called more than once")

// epochLength is the tick of the windowed metrics.
const epochLength = time.Second

// Run is the one scheduler goroutine: it owns every queue, admits arrivals,
// hands freed slots to waiting requests by DRR, and returns nil when ctx
// ends, after answering every queued request with ErrDraining. Run may be
// called once per Scheduler (see ErrRunTwice).
//
// Run is the only writer of the DRR state. Once per second (and when it
// stops) it publishes the snapshot the per-tenant gauges read:
// ron_gateway_drr_queue_depth / _weight {tenant} (waiting requests and
// summed weights of the label's backlogged tenants), _weight_sum and
// _active_tenants over all backlogged tenants, _share {tenant} (the label's
// part of the cost dispatched in the last 10 s) and _fairness (Jain's index
// of cost/weight over the tenants backlogged since the start of those 10 s;
// 1 when fewer than two). Time is counted in whole seconds of Run.
// ron_gateway_drr_dispatched_cost_total {tenant} counts at each dispatch.
func (s *Scheduler) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return ErrRunTwice
	}
	defer close(s.done)
	defer s.drain()
	tick := time.NewTicker(epochLength)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case w := <-s.arrive:
			s.admit(w)
		case w := <-s.leave:
			s.withdraw(w)
		case <-s.poke:
		case <-tick.C:
			s.publish()
			s.epoch++
			s.forget()
		}
		s.dispatch()
		s.report()
	}
}

// admit handles one arrival: dispatch at once when a slot is free and nobody
// waits; refuse when the tenant's queue is full; otherwise queue it, first
// dropping the oldest waiting request when the total queue is full.
func (s *Scheduler) admit(w *waiter) {
	tun := s.tunables()
	w.stats = s.labelOf(w.tenant)
	s.learn(w.tenant, w.stats)
	switch {
	case s.waiting.Load() == 0 && s.take():
		s.grant(w)
	case s.queueLen(w.tenant) >= tun.TenantQueueCap:
		w.ch <- ErrTenantQueue
	default:
		if s.waiting.Load() >= int64(tun.QueueCap) {
			s.dropOldest()
		}
		s.enqueue(w)
		s.waiting.Add(1)
	}
}

// dropOldest answers the longest-waiting request with ErrDropped.
func (s *Scheduler) dropOldest() {
	old := s.oldest()
	if old == nil || !s.remove(old) {
		return
	}
	s.waiting.Add(-1)
	s.m.dropped.Inc()
	old.ch <- ErrDropped
	s.dropped()
}

// dropped tells OnDrop about a request the scheduler gave up on.
func (s *Scheduler) dropped() {
	if s.opt.OnDrop != nil {
		s.opt.OnDrop()
	}
}

// withdraw removes a request whose handler stopped waiting. A request already
// answered (granted or dropped) is left alone: its handler reads the answer.
func (s *Scheduler) withdraw(w *waiter) {
	if s.remove(w) {
		s.waiting.Add(-1)
	}
}

// dispatch fills free slots with waiting requests in DRR order.
func (s *Scheduler) dispatch() {
	quantum := s.tunables().Quantum
	for len(s.ring) > 0 && s.take() {
		w := s.next(quantum)
		if w == nil {
			s.inflight.Add(-1)
			return
		}
		s.waiting.Add(-1)
		s.grant(w)
	}
}

// grant gives w the slot taken for it.
func (s *Scheduler) grant(w *waiter) {
	s.account(w)
	w.ch <- nil
}

// report gives OnWaiting the waiting count when it changed.
func (s *Scheduler) report() {
	n := s.waiting.Load()
	if n == s.reported || s.opt.OnWaiting == nil {
		return
	}
	s.reported = n
	s.opt.OnWaiting(int(n))
}

// drain answers every queued request with ErrDraining.
func (s *Scheduler) drain() {
	for _, t := range s.ring {
		for _, w := range t.fifo {
			w.queued = false
			w.ch <- ErrDraining
		}
	}
	s.ring, s.tenants = nil, map[string]*tenantQueue{}
	s.waiting.Store(0)
	s.report()
	s.publish()
}
