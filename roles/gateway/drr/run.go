package drr

import (
	"context"
	"errors"
)

// errRunTwice is returned by a second call of Run.
var errRunTwice = errors.New("drr: Run called more than once")

// Run is the one scheduler goroutine: it owns every queue, admits arrivals,
// hands freed slots to waiting requests by DRR, and returns nil when ctx
// ends, after answering every queued request with ErrDraining. Run may be
// called once per Scheduler.
func (s *Scheduler) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return errRunTwice
	}
	defer close(s.done)
	defer s.drain()
	for {
		select {
		case <-ctx.Done():
			return nil
		case w := <-s.arrive:
			s.admit(w)
		case w := <-s.leave:
			s.withdraw(w)
		case <-s.release:
			s.inflight.Add(-1)
		}
		s.dispatch()
	}
}

// admit handles one arrival: dispatch at once when a slot is free and nobody
// waits; refuse when the tenant's queue is full; otherwise queue it, first
// dropping the oldest waiting request when the total queue is full.
func (s *Scheduler) admit(w *waiter) {
	switch {
	case s.waiting.Load() == 0 && s.inflight.Load() < int64(s.opt.Slots):
		s.grant(w)
	case s.queueLen(w.tenant) >= s.opt.TenantQueueCap:
		w.ch <- ErrTenantQueue
	default:
		if s.waiting.Load() >= int64(s.opt.QueueCap) {
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
	for s.inflight.Load() < int64(s.opt.Slots) {
		w := s.next(s.opt.Quantum)
		if w == nil {
			return
		}
		s.waiting.Add(-1)
		s.grant(w)
	}
}

// grant gives w a slot.
func (s *Scheduler) grant(w *waiter) {
	s.inflight.Add(1)
	w.ch <- nil
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
}
