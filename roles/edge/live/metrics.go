package live

import (
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/roles/edge/edgeapi"
	"github.com/ronhq/ron/runtime"
)

// Label values of docs/edge.md §11.
const (
	roleName    = edgeapi.RoleName
	routeAssets = "/assets/{origin}/{path...}"
	sourceName  = "origin"
)

// ron_edge_rejects_total reasons this package counts.
const (
	reasonAmnesia       = "amnesia"
	reasonNotAllowed    = "not_allowed"
	reasonDecompressCap = "decompress_cap"
	reasonBodyCap       = "body_cap"
	reasonTimeout       = "timeout"
	reasonInvalidRange  = "invalid_range"
	reasonEtagInvalid   = "etag_invalid"
)

// ron_edge_cache_lookups_total results.
const (
	lookupHit         = "hit"
	lookupMiss        = "miss"
	lookupStaleServed = "stale_served"
	lookupRevalidated = "revalidated"
	lookupRefetched   = "refetched"
	lookupBypass      = "bypass"
)

// ron_edge_fills_total results.
const (
	fillStored      = "stored"
	fillPassed      = "passed"
	fillNotModified = "not_modified"
	fillError       = "error"
	fillTimeout     = "timeout"
)

// liveMetrics are this package's series (all role="edge").
type liveMetrics struct {
	m            *runtime.Metrics
	fillDuration *metrics.Histogram
	upstream     *metrics.Counter
	served       *metrics.Counter
	coalesced    *metrics.Counter
	retries      *metrics.Counter
	timeouts     *metrics.Counter
}

func newLiveMetrics(m *runtime.Metrics) *liveMetrics {
	lm := &liveMetrics{m: m,
		fillDuration: m.Histogram("edge_fill_duration_seconds", "role", roleName, "source", sourceName),
		upstream:     m.Counter("edge_upstream_bytes_total", "role", roleName, "source", sourceName),
		served:       m.Counter("edge_bytes_served_total", "role", roleName, "route", routeAssets),
		coalesced:    m.Counter("edge_coalesced_total", "role", roleName, "route", routeAssets),
		retries:      m.Counter("backoff_retries_total", "role", roleName, "op", "live_fill"),
		timeouts:     m.Counter("io_timeouts_total", "role", roleName, "op", "fill"),
	}
	for _, r := range []string{lookupHit, lookupMiss, lookupStaleServed, lookupRevalidated, lookupRefetched, lookupBypass} {
		lm.lookup(r, 0)
	}
	for _, r := range []string{fillStored, fillPassed, fillNotModified, fillError, fillTimeout} {
		lm.m.Counter("edge_fills_total", "role", roleName, "source", sourceName, "result", r)
	}
	return lm
}

// lookup counts n cache outcomes of result.
func (lm *liveMetrics) lookup(result string, n int) {
	lm.m.Counter("edge_cache_lookups_total", "role", roleName, "route", routeAssets, "result", result).Add(n)
}

// fill counts one upstream exchange outcome and its duration.
func (lm *liveMetrics) fill(result string, start, end time.Time) {
	lm.m.Counter("edge_fills_total", "role", roleName, "source", sourceName, "result", result).Inc()
	lm.fillDuration.Update(end.Sub(start).Seconds())
}

// reject counts one refusal under ron_edge_rejects_total{reason}.
func (lm *liveMetrics) reject(reason string) {
	lm.m.Counter("edge_rejects_total", "role", roleName, "reason", reason).Inc()
}

// busy counts a work-queue rejection.
func (lm *liveMetrics) busy() { lm.m.BusyRejection(roleName, routeAssets) }

// rangeResult counts one Range request answered from an entry.
func (lm *liveMetrics) rangeResult(status int) {
	result := "200"
	switch status {
	case 206:
		result = "206"
	case 416:
		result = "416"
	}
	lm.m.Counter("edge_range_requests_total", "role", roleName, "result", result).Inc()
}
