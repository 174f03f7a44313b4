package hedge

import (
	"errors"

	"github.com/ronhq/ron/runtime"
)

// meters records the spec/index.md §13 metrics of the lookups; a nil
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

// done counts one lookup: ron_dht_hedged_requests_total{result} with alpha
// (won before the hedge), beta (won after it) or none; and
// ron_io_timeouts_total{op="peer_lookup"} when the budget ran out.
func (mt meters) done(res Result, err error) {
	if mt.m == nil {
		return
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
