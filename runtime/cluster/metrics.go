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

// Values of ron_cluster_reconnects_total{result}: the push/pull exchange
// with the address completed, or it did not (unreachable, refused, timed
// out, unresolvable).
const (
	reconnectOK     = "ok"
	reconnectFailed = "failed"
)

// memberMetrics exports ron_cluster_members{state},
// ron_cluster_member_events_total{event} and
// ron_cluster_reconnects_total{result}, all with role="node".
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
	for _, r := range []string{reconnectOK, reconnectFailed} {
		mm.m.Counter("cluster_reconnects_total", "role", metricRole, "result", r)
	}
	return mm
}

// reconnect counts one reconnect attempt with result reconnectOK or
// reconnectFailed.
func (mm memberMetrics) reconnect(result string) {
	mm.m.Counter("cluster_reconnects_total", "role", metricRole, "result", result).Inc()
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
