package edge

import (
	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/runtime"
)

// Reasons of ron_edge_rejects_total{reason} (docs/edge.md §11). The role
// counts the refusals it makes itself (not_allowed, rate_limit, timeout);
// the building blocks count theirs under the same series.
const (
	ReasonAmnesia       = "amnesia"
	ReasonNotAllowed    = "not_allowed"
	ReasonDecompressCap = "decompress_cap"
	ReasonBodyCap       = "body_cap"
	ReasonTimeout       = "timeout"
	ReasonRateLimit     = "rate_limit"
	ReasonInvalidRange  = "invalid_range"
	ReasonEtagInvalid   = "etag_invalid"
)

// rejectReasons lists every reason, so each series exists (at 0) from Start.
var rejectReasons = []string{ReasonAmnesia, ReasonNotAllowed, ReasonDecompressCap, ReasonBodyCap, ReasonTimeout,
	ReasonRateLimit, ReasonInvalidRange, ReasonEtagInvalid}

// edgeMetrics are the role's own series of docs/edge.md §11 that no building block owns.
type edgeMetrics struct {
	m            *runtime.Metrics
	writeTimeout *metrics.Counter // ron_io_timeouts_total{op="write"}
	watchSpawned *metrics.Counter // ron_tasks_spawned_total{kind="pack_watch"}
	watchStopped *metrics.Counter // ron_tasks_canceled_total{kind="pack_watch"}
	recSpawned   *metrics.Counter // ron_tasks_spawned_total{kind="reconcile"}
	recCanceled  *metrics.Counter // ron_tasks_canceled_total{kind="reconcile"}
}

func newEdgeMetrics(m *runtime.Metrics) *edgeMetrics {
	for _, r := range rejectReasons {
		m.Counter("edge_rejects_total", "role", roleName, "reason", r)
	}
	return &edgeMetrics{m: m,
		writeTimeout: m.Counter("io_timeouts_total", "role", roleName, "op", "write"),
		watchSpawned: m.Counter("tasks_spawned_total", "role", roleName, "kind", "pack_watch"),
		watchStopped: m.Counter("tasks_canceled_total", "role", roleName, "kind", "pack_watch"),
		recSpawned:   m.Counter("tasks_spawned_total", "role", roleName, "kind", "reconcile"),
		recCanceled:  m.Counter("tasks_canceled_total", "role", roleName, "kind", "reconcile"),
	}
}

// reject counts one refusal under ron_edge_rejects_total{reason}.
func (em *edgeMetrics) reject(reason string) {
	em.m.Counter("edge_rejects_total", "role", roleName, "reason", reason).Inc()
}
