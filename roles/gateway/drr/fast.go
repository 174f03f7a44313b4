package drr

import "context"

// maxFastTenants bounds the tenants the fast path knows; past it Run starts
// the cache over. It is also started over every epoch, so a tenant's label
// (Options.Label) is at most one epoch old on the fast path.
const maxFastTenants = 4096

// fastAcquire takes a slot for tenant without Run when Run is running, the
// slot is free, nobody waits and ctx is live; nil otherwise (Acquire then
// goes through Run). The tenant must have arrived through Run before (it
// knows the tenant's metric label): the first request of a tenant, and the
// first after each epoch, take the slow path. The dispatched cost is counted
// at once and folded into the share window at the next publish.
func (s *Scheduler) fastAcquire(ctx context.Context, tenant string, cost int) func() {
	if !s.running.Load() || s.waiting.Load() != 0 || ctx.Err() != nil {
		return nil
	}
	select {
	case <-s.done:
		return nil // stopped: Acquire answers ErrDraining
	default:
	}
	v, ok := s.fast.Load(tenant)
	if !ok || !s.take() {
		return nil
	}
	v.(*labelStats).dispatchedFast(clamp(cost, 1, MaxCost))
	return s.releaser()
}

// learn lets the fast path serve tenant's later requests under ls (Run only).
func (s *Scheduler) learn(tenant string, ls *labelStats) {
	if cur, ok := s.fast.Load(tenant); ok && cur == ls {
		return
	}
	if s.fastLen >= maxFastTenants {
		s.forget()
	}
	s.fast.Store(tenant, ls)
	s.fastLen++
}

// forget empties the fast path's tenant cache (Run only).
func (s *Scheduler) forget() {
	s.fast.Clear()
	s.fastLen = 0
}
