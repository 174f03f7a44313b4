package objects

import (
	"strconv"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/roles/edge/edgeapi"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
)

// Metric label values (docs/edge.md §11).
const (
	role = edgeapi.RoleName
	// Route is the route template of GET|HEAD /o/{b3}: the route and
	// endpoint label of this package's series.
	Route = "/o/{b3}"
	// sourceLabel is the source label of the fill series: providers count
	// as storage (the spec's sources are storage and origin).
	sourceLabel = storageapi.RoleName
)

// Reasons of ron_edge_rejects_total counted here.
const (
	ReasonEtagInvalid  = "etag_invalid"
	ReasonInvalidRange = "invalid_range"
	ReasonAmnesia      = "amnesia"
)

// Results of ron_edge_fills_total{source="storage"}.
const (
	resultStored   = "stored"
	resultPassed   = "passed"
	resultMismatch = "hash_mismatch"
	resultError    = "error"
	resultTimeout  = "timeout"
)

// objMetrics are the series of /o.
type objMetrics struct {
	m             *runtime.Metrics
	hit, miss     *metrics.Counter // ron_edge_cache_lookups_total{route,result}
	served        *metrics.Counter // ron_edge_bytes_served_total{route}
	coalesced     *metrics.Counter // ron_edge_coalesced_total{route}
	upstream      *metrics.Counter // ron_edge_upstream_bytes_total{source}
	retries       *metrics.Counter // ron_backoff_retries_total{op="object_fill"}
	timeouts      *metrics.Counter // ron_io_timeouts_total{op="fill"}
	etagInvalid   *metrics.Counter
	invalidRange  *metrics.Counter
	amnesia       *metrics.Counter
	fillDuration  *metrics.Histogram
	fills         map[string]*metrics.Counter // by result
	rangeRequests map[int]*metrics.Counter    // ron_edge_range_requests_total{result}
}

func newObjMetrics(m *runtime.Metrics) *objMetrics {
	if m == nil {
		m = runtime.NewMetrics(nil)
	}
	reject := func(r string) *metrics.Counter { return m.Counter("edge_rejects_total", "role", role, "reason", r) }
	om := &objMetrics{m: m,
		hit:           m.Counter("edge_cache_lookups_total", "role", role, "route", Route, "result", "hit"),
		miss:          m.Counter("edge_cache_lookups_total", "role", role, "route", Route, "result", "miss"),
		served:        m.Counter("edge_bytes_served_total", "role", role, "route", Route),
		coalesced:     m.Counter("edge_coalesced_total", "role", role, "route", Route),
		upstream:      m.Counter("edge_upstream_bytes_total", "role", role, "source", sourceLabel),
		retries:       m.Counter("backoff_retries_total", "role", role, "op", "object_fill"),
		timeouts:      m.Counter("io_timeouts_total", "role", role, "op", "fill"),
		etagInvalid:   reject(ReasonEtagInvalid),
		invalidRange:  reject(ReasonInvalidRange),
		amnesia:       reject(ReasonAmnesia),
		fillDuration:  m.Histogram("edge_fill_duration_seconds", "role", role, "source", sourceLabel),
		fills:         map[string]*metrics.Counter{},
		rangeRequests: map[int]*metrics.Counter{},
	}
	for _, r := range []string{resultStored, resultPassed, resultMismatch, resultError, resultTimeout} {
		om.fills[r] = m.Counter("edge_fills_total", "role", role, "source", sourceLabel, "result", r)
	}
	for _, st := range []int{200, 206, 416} {
		om.rangeRequests[st] = m.Counter("edge_range_requests_total", "role", role, "result", strconv.Itoa(st))
	}
	return om
}

// fill counts one finished fill job: its result and its duration.
func (om *objMetrics) fill(result string, start time.Time) {
	om.fills[result].Inc()
	om.fillDuration.UpdateDuration(start)
}

// rangeResult counts a GET carrying Range by its outcome (200, 206, 416).
func (om *objMetrics) rangeResult(status int) {
	if c := om.rangeRequests[status]; c != nil {
		c.Inc()
	}
}

// busy counts a miss refused because the work queue was full.
func (om *objMetrics) busy() { om.m.BusyRejection(role, Route) }
