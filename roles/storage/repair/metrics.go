package repair

import (
	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
)

// role is the label every repair metric carries.
const role = storageapi.RoleName

// engineMetrics are the repair metrics of docs/cluster.md §11 that are
// counted (the gauges are callbacks registered by Repairer.registerGauges).
type engineMetrics struct {
	m        *runtime.Metrics
	wait     *metrics.Histogram
	skipped  *metrics.Counter
	planned  *metrics.Counter
	executed *metrics.Counter
	passes   *metrics.Counter
}

func newEngineMetrics(m *runtime.Metrics) engineMetrics {
	em := engineMetrics{
		m:        m,
		wait:     m.Histogram("repair_wait_seconds", "role", role),
		skipped:  m.Counter("repair_skipped_total", "role", role, "reason", "full"),
		planned:  m.Counter("repair_bytes_total", "role", role, "phase", "planned"),
		executed: m.Counter("repair_bytes_total", "role", role, "phase", "executed"),
		passes:   m.Counter("repair_passes_total", "role", role),
	}
	for _, k := range []Kind{KindPush, KindPull} {
		em.objects(k, "ok", ReasonCopied, 0)
		em.objects(k, "error", ReasonError, 0)
	}
	return em
}

// objects adds n to ron_repair_objects_total{kind,result,reason}.
func (em engineMetrics) objects(k Kind, result, reason string, n int) {
	em.m.Counter("repair_objects_total", "role", role, "kind", k.String(), "result", result, "reason", reason).Add(n)
}

// gauge registers the callback gauge ron_<name>{role="storage"}.
func (em engineMetrics) gauge(name string, fn func() float64) {
	em.m.Gauge(name, fn, "role", role)
}

// registerGauges registers every progress gauge at start, so they read 0
// before the first pass.
func (r *Repairer) registerGauges() {
	last := func(f func(passStats) float64) func() float64 {
		return func() float64 {
			s, _, ok := r.prog.lastPass()
			if !ok {
				return 0
			}
			return f(s)
		}
	}
	em := r.metrics
	em.gauge("repair_under_replicated_objects", last(func(s passStats) float64 { return float64(s.under) }))
	em.gauge("repair_excess_objects", last(func(s passStats) float64 { return float64(s.excess) }))
	em.gauge("repair_pending_bytes", func() float64 { return float64(r.pending()) })
	em.gauge("repair_eta_seconds", func() float64 {
		if eta := r.eta(); eta != nil {
			return *eta
		}
		return 0
	})
	em.gauge("repair_rate_bytes_per_second", r.prog.rateNow)
	em.gauge("repair_pace_bytes_per_second", func() float64 { return float64(r.pacer.Pace()) })
	em.gauge("repair_pass_duration_seconds", func() float64 {
		_, d, _ := r.prog.lastPass()
		return d.Seconds()
	})
	em.gauge("rf_target", func() float64 { return float64(r.cfg().RF) })
	em.gauge("rf_observed", func() float64 { return float64(r.observedRF()) })
}
