package cluster

import (
	"github.com/ronhq/ron/runtime"
)

// metricRole labels membership metrics: they are the process's, not a
// role's (docs/cluster.md §11).
const metricRole = "node"

// memberEvents are the values of ron_cluster_member_events_total{event}.
var memberEvents = []string{"join", "update", "dead", "left", "conflict", "unlisted"}

// memberStates are the values of ron_cluster_members{state}.
var memberStates = []State{StateAlive, StateDead, StateLeft}

// memberMetrics exports ron_cluster_members{state} and
// ron_cluster_member_events_total{event}, all with role="node".
type memberMetrics struct {
	m *runtime.Metrics
}

// newMemberMetrics registers every series at 0 (alerts see the first
// increase).
func newMemberMetrics(m *runtime.Metrics) memberMetrics {
	if m == nil {
		m = runtime.NewMetrics(nil)
	}
	mm := memberMetrics{m: m}
	for _, ev := range memberEvents {
		mm.m.Counter("cluster_member_events_total", "role", metricRole, "event", ev)
	}
	for _, s := range memberStates {
		mm.m.Gauge("cluster_members", nil, "role", metricRole, "state", string(s))
	}
	return mm
}

// event counts one member event.
func (mm memberMetrics) event(ev string) {
	mm.m.Counter("cluster_member_events_total", "role", metricRole, "event", ev).Inc()
}

// members sets the per-state gauges from v.
func (mm memberMetrics) members(v *View) {
	n := map[State]int{}
	for _, m := range v.Members {
		n[m.State]++
	}
	for _, s := range memberStates {
		mm.m.Gauge("cluster_members", nil, "role", metricRole, "state", string(s)).Set(float64(n[s]))
	}
}
