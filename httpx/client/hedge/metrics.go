package hedge

import (
	"errors"
	"time"

	"github.com/ronhq/ron/runtime"
)

// meters records the docs/index.md §13 metrics of the lookups; a nil
// Metrics makes every method a no-op.
type meters struct {
	m    *runtime.Metrics
	role string
}

func newMeters(opt Options) meters { return meters{m: opt.Metrics, role: opt.Role} }

// peer counts one leg's final outcome:
// ron_index_peer_requests_total{role,target,result}.
func (mt meters) peer(target, result string) {
	if mt.m != nil {
		mt.m.Counter("index_peer_requests_total", "role", mt.role, "target", target, "result", result).Inc()
	}
}

// retry counts one retry: ron_backoff_retries_total{role,op="peer_lookup"}.
func (mt meters) retry() {
	if mt.m != nil {
		mt.m.Counter("backoff_retries_total", "role", mt.role, "op", "peer_lookup").Inc()
	}
}

// spawned counts one leg: ron_tasks_spawned_total{role,kind="lookup_leg"}.
func (mt meters) spawned() {
	if mt.m != nil {
		mt.m.Counter("tasks_spawned_total", "role", mt.role, "kind", "lookup_leg").Inc()
	}
}

// canceled counts one losing leg: ron_tasks_canceled_total{kind="lookup_leg"}.
func (mt meters) canceled() {
	if mt.m != nil {
		mt.m.Counter("tasks_canceled_total", "role", mt.role, "kind", "lookup_leg").Inc()
	}
}

// aborted counts legs still open when the caller gave up (shutdown):
// ron_tasks_aborted_total{kind="lookup_leg"}.
func (mt meters) aborted(n int) {
	if mt.m != nil && n > 0 {
		mt.m.Counter("tasks_aborted_total", "role", mt.role, "kind", "lookup_leg").Add(n)
	}
}

// DHTLookupBuckets are the upper bounds (ms) of ron_index_dht_lookup_ms
// (docs/index.md §13).
var DHTLookupBuckets = []float64{10, 25, 50, 80, 120, 150, 200, 350, 600, 1000, 1200}

// done counts one lookup: ron_dht_hedged_requests_total{result} with alpha
// (won before the hedge), beta (won after it) or none;
// ron_io_timeouts_total{op="peer_lookup"} when the budget ran out; and the
// fan-out duration in ron_index_dht_lookup_ms when a peer was asked.
func (mt meters) done(res Result, err error) {
	if mt.m == nil {
		return
	}
	if res.Asked > 0 {
		name := runtime.MetricName("index_dht_lookup_ms", "role", mt.role)
		mt.m.Set().GetOrCreatePrometheusHistogramExt(name, DHTLookupBuckets).
			Update(float64(res.Elapsed) / float64(time.Millisecond))
	}
	result := "none"
	switch {
	case res.Winner != "" && res.Hedged:
		result = "beta"
	case res.Winner != "":
		result = "alpha"
	}
	mt.m.Counter("dht_hedged_requests_total", "role", mt.role, "result", result).Inc()
	if errors.Is(err, ErrTimeout) {
		mt.m.Counter("io_timeouts_total", "role", mt.role, "op", "peer_lookup").Inc()
	}
}
