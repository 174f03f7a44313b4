package tenants

import (
	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/roles/gateway/gatewayapi"
	"github.com/ronhq/ron/runtime"
)

// roleName labels the metrics and log lines.
const roleName = gatewayapi.RoleName

// kindWatch is the task kind of the registry subscription.
const kindWatch = "registry_watch"

// Reasons a registry version is not applied (ron_gateway_tenants_rejected_total).
const (
	rejectFetch    = "fetch"       // Head or Get failed
	rejectMismatch = "b3_mismatch" // the artifact's payload_b3 is not the announced one
	rejectPayload  = "payload"     // the payload has no readable items
)

// meters are the follower's metrics, all created (and so exported) up front.
type meters struct {
	version  *metrics.Gauge   // ron_gateway_tenants_version
	invalid  *metrics.Counter // ron_gateway_tenant_items_invalid_total
	rejected map[string]*metrics.Counter
	spawned  *metrics.Counter // ron_tasks_spawned_total{kind="registry_watch"}
	canceled *metrics.Counter // ron_tasks_canceled_total{kind="registry_watch"}
}

func newMeters(m *runtime.Metrics) meters {
	if m == nil {
		m = runtime.NewMetrics(nil)
	}
	r := map[string]*metrics.Counter{}
	for _, reason := range []string{rejectFetch, rejectMismatch, rejectPayload} {
		r[reason] = m.Counter("gateway_tenants_rejected_total", "role", roleName, "reason", reason)
	}
	return meters{
		version:  m.Gauge("gateway_tenants_version", nil, "role", roleName),
		invalid:  m.Counter("gateway_tenant_items_invalid_total", "role", roleName),
		rejected: r,
		spawned:  m.Counter("tasks_spawned_total", "role", roleName, "kind", kindWatch),
		canceled: m.Counter("tasks_canceled_total", "role", roleName, "kind", kindWatch),
	}
}
