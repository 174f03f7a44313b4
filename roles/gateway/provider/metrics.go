package provider

import (
	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/runtime"
)

// fetchMetrics are the Fetcher's series (docs/gateway.md §10).
type fetchMetrics struct {
	m             *runtime.Metrics
	mismatch      *metrics.Counter // ron_gateway_hash_mismatch_total
	timeouts      *metrics.Counter // ron_io_timeouts_total{op="provider"}
	writeTimeouts *metrics.Counter // ron_io_timeouts_total{op="forward"}: a client stalled
}

func newFetchMetrics(m *runtime.Metrics, h *health) fetchMetrics {
	for _, state := range client.BreakerStates {
		m.Gauge("breaker_state", func() float64 {
			if h.worstState() == state {
				return 1
			}
			return 0
		}, "role", roleName, "target", "provider", "state", state)
	}
	return fetchMetrics{
		m:             m,
		mismatch:      m.Counter("gateway_hash_mismatch_total", "role", roleName),
		timeouts:      m.Counter("io_timeouts_total", "role", roleName, "op", "provider"),
		writeTimeouts: m.Counter("io_timeouts_total", "role", roleName, "op", "forward"),
	}
}

// request counts one provider request by its status code,
// vfetch.CodeError or vfetch.CodeTimeout.
func (fm fetchMetrics) request(code string) {
	fm.m.Counter("gateway_upstream_requests_total", "role", roleName, "upstream", "provider", "code", code).Inc()
}
