package runtime

import (
	"context"
	"sync/atomic"
	"time"
)

// ReadinessRefresh is how often ReadinessGauges re-reads the roles'
// readiness.
const ReadinessRefresh = 5 * time.Second

// ReadinessGauges exports each role's readiness as metrics for alerting:
// ron_role_ready{role} and ron_role_degraded{role}, 1 or 0, as
// /api/v1/status shows them. Readiness checks may do I/O (storage probes
// its disk), so they never run on a scrape: Run refreshes the values every
// ReadinessRefresh and the gauges read the last values.
type ReadinessGauges struct {
	mgr   *Manager
	roles map[string]*roleFlags
}

// roleFlags are one role's last readiness values.
type roleFlags struct{ ready, degraded atomic.Bool }

// NewReadinessGauges registers the gauges of every role added to mgr so
// far (all of them are 0 until the first Refresh).
func NewReadinessGauges(mgr *Manager, m *Metrics) *ReadinessGauges {
	m = m.orNew()
	g := &ReadinessGauges{mgr: mgr, roles: map[string]*roleFlags{}}
	for _, v := range mgr.snapshot() {
		name := v.role.Name()
		f := &roleFlags{}
		g.roles[name] = f
		m.Gauge("role_ready", func() float64 { return boolValue(f.ready.Load()) }, "role", name)
		m.Gauge("role_degraded", func() float64 { return boolValue(f.degraded.Load()) }, "role", name)
	}
	return g
}

// Refresh reads every role's status once, its checks bounded by ctx.
// The values are those of /api/v1/status (StatusContext) without the
// roles' details, which the gauges do not need.
func (g *ReadinessGauges) Refresh(ctx context.Context) {
	draining := g.mgr.Draining()
	for _, v := range g.mgr.snapshot() {
		if f := g.roles[v.role.Name()]; f != nil {
			ready, degraded := roleFlagsOf(draining, roleReadiness(ctx, v))
			f.ready.Store(ready)
			f.degraded.Store(degraded)
		}
	}
}

// Run refreshes the values at once and then every interval until ctx ends;
// each refresh is bounded by the status timeout.
func (g *ReadinessGauges) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, statusReadyTimeout)
		g.Refresh(rctx)
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// boolValue is 1 for true, 0 for false.
func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
