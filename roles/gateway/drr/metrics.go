package drr

import (
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"
)

// schedMetrics are the scheduler's series (spec/gateway.md §10).
type schedMetrics struct {
	dropped   *metrics.Counter // ron_queue_dropped_total{queue="sched"}
	canceled  *metrics.Counter // ron_tasks_canceled_total{kind="sched"}
	waitTimes *metrics.Counter // ron_io_timeouts_total{op="queue_wait"}
}

func newSchedMetrics(o Options, waiting, inflight *atomic.Int64) schedMetrics {
	m, role := o.Metrics, o.Role
	capacity := float64(o.QueueCap)
	m.Gauge("queue_depth", func() float64 { return float64(waiting.Load()) }, "role", role, "queue", "sched")
	m.Gauge("queue_capacity", func() float64 { return capacity }, "role", role, "queue", "sched")
	m.Gauge("gateway_inflight", func() float64 { return float64(inflight.Load()) }, "role", role)
	return schedMetrics{
		dropped:   m.Counter("queue_dropped_total", "role", role, "queue", "sched"),
		canceled:  m.Counter("tasks_canceled_total", "role", role, "kind", "sched"),
		waitTimes: m.Counter("io_timeouts_total", "role", role, "op", "queue_wait"),
	}
}
