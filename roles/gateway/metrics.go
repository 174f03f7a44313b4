package gateway

import (
	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/runtime"
)

// gatewayMetrics are the role's own series of docs/gateway.md §10 that no
// building block owns.
type gatewayMetrics struct {
	m       *runtime.Metrics
	aborted *metrics.Counter // ron_tasks_aborted_total{kind="forward"}
	streams *metrics.Counter // ron_tasks_spawned_total{kind="stream"}
}

func newGatewayMetrics(m *runtime.Metrics) *gatewayMetrics {
	return &gatewayMetrics{m: m,
		aborted: m.Counter("tasks_aborted_total", "role", roleName, "kind", "forward"),
		streams: m.Counter("tasks_spawned_total", "role", roleName, "kind", "stream"),
	}
}
