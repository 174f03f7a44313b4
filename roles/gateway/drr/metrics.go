package drr

import (
	"github.com/VictoriaMetrics/metrics"
)

// schedMetrics are the scheduler's series (docs/gateway.md §10).
type schedMetrics struct {
	dropped   *metrics.Counter // ron_queue_dropped_total{queue="sched"}
	canceled  *metrics.Counter // ron_tasks_canceled_total{kind="sched"}
	waitTimes *metrics.Counter // ron_io_timeouts_total{op="queue_wait"}
}

// newSchedMetrics registers the scheduler-wide series. Live values come from
// atomics written by Run; the DRR gauges read Run's latest snapshot.
func newSchedMetrics(s *Scheduler) schedMetrics {
	m, role := s.opt.Metrics, s.opt.Role
	m.Gauge("queue_depth", func() float64 { return float64(s.waiting.Load()) }, "role", role, "queue", "sched")
	m.Gauge("queue_capacity", func() float64 { return float64(s.tunables().QueueCap) }, "role", role, "queue", "sched")
	m.Gauge("gateway_inflight", func() float64 { return float64(s.inflight.Load()) }, "role", role)
	m.Gauge("gateway_drr_weight_sum", func() float64 { return float64(s.snap.Load().weightSum) }, "role", role)
	m.Gauge("gateway_drr_active_tenants", func() float64 { return float64(s.snap.Load().active) }, "role", role)
	m.Gauge("gateway_drr_fairness", func() float64 { return s.snap.Load().fairness }, "role", role)
	return schedMetrics{
		dropped:   m.Counter("queue_dropped_total", "role", role, "queue", "sched"),
		canceled:  m.Counter("tasks_canceled_total", "role", role, "kind", "sched"),
		waitTimes: m.Counter("io_timeouts_total", "role", role, "op", "queue_wait"),
	}
}

// registerLabel registers the per-tenant series of one label and returns its
// dispatched-cost counter.
func (s *Scheduler) registerLabel(label string) *metrics.Counter {
	m, role := s.opt.Metrics, s.opt.Role
	m.Gauge("gateway_drr_queue_depth", func() float64 { return float64(s.snap.Load().labels[label].depth) }, "role", role, "tenant", label)
	m.Gauge("gateway_drr_weight", func() float64 { return float64(s.snap.Load().labels[label].weight) }, "role", role, "tenant", label)
	m.Gauge("gateway_drr_share", func() float64 { return s.snap.Load().labels[label].share }, "role", role, "tenant", label)
	return m.Counter("gateway_drr_dispatched_cost_total", "role", role, "tenant", label)
}
