package tiles

import (
	"maps"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/roles/edge/edgeapi"
	"github.com/ronhq/ron/runtime"
)

// role labels every metric of this package.
const role = edgeapi.RoleName

// Route templates: the route label of ron_edge_bytes_served_total.
const (
	RouteTile     = "/tiles/{name}/{z}/{x}/{y}.{ext}"
	RouteTileJSON = "/tiles/{name}.json"
	RoutePacks    = "/packs"
	RouteArchive  = "/packs/{name}.pmtiles"
)

// Reasons of ron_edge_rejects_total counted here.
const (
	ReasonDecompressCap = "decompress_cap"
	ReasonInvalidRange  = "invalid_range"
	// ReasonZoom is details.reason of a tile outside the pack's zoom range
	// (not a ron_edge_rejects_total reason).
	ReasonZoom = "zoom"
)

// tileMetrics holds the package's series; per-pack tile counters are
// created on first use and kept.
type tileMetrics struct {
	m      *runtime.Metrics
	ranges map[int]*metrics.Counter    // ron_edge_range_requests_total{result}
	bytes  map[string]*metrics.Counter // ron_edge_bytes_served_total{route}
	cap    *metrics.Counter            // ron_edge_rejects_total{reason="decompress_cap"}
	bad    *metrics.Counter            // ron_edge_rejects_total{reason="invalid_range"}

	// tiles holds ron_edge_tiles_total{pack,status}: an immutable map,
	// replaced whole (under mu) when a series is added, so counting reads
	// it without a lock.
	mu    sync.Mutex
	tiles atomic.Pointer[map[packStatus]*metrics.Counter]
}

// packStatus keys the per-pack tile counters.
type packStatus struct {
	pack   string
	status int
}

func newTileMetrics(m *runtime.Metrics) *tileMetrics {
	if m == nil {
		m = runtime.NewMetrics(nil)
	}
	tm := &tileMetrics{m: m, ranges: map[int]*metrics.Counter{}, bytes: map[string]*metrics.Counter{},
		cap: m.Counter("edge_rejects_total", "role", role, "reason", ReasonDecompressCap),
		bad: m.Counter("edge_rejects_total", "role", role, "reason", ReasonInvalidRange)}
	for _, st := range []int{200, 206, 416} {
		tm.ranges[st] = m.Counter("edge_range_requests_total", "role", role, "result", strconv.Itoa(st))
	}
	for _, r := range []string{RouteTile, RouteTileJSON, RoutePacks, RouteArchive} {
		tm.bytes[r] = m.Counter("edge_bytes_served_total", "role", role, "route", r)
	}
	tm.tiles.Store(&map[packStatus]*metrics.Counter{})
	return tm
}

// tile counts one tile answer: status is 200, 204, 304 or 404 (a 206 counts
// as 200). pack is "" for an unknown pack name, so request paths never
// create series.
func (tm *tileMetrics) tile(pack string, status int) {
	if status == 206 {
		status = 200
	}
	key := packStatus{pack, status}
	c := (*tm.tiles.Load())[key]
	if c == nil {
		c = tm.addTileSeries(key)
	}
	c.Inc()
}

// addTileSeries creates the counter of key and publishes a map holding it.
func (tm *tileMetrics) addTileSeries(key packStatus) *metrics.Counter {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	old := *tm.tiles.Load()
	if c := old[key]; c != nil {
		return c
	}
	c := tm.m.Counter("edge_tiles_total", "role", role, "pack", key.pack, "status", strconv.Itoa(key.status))
	next := make(map[packStatus]*metrics.Counter, len(old)+1)
	maps.Copy(next, old)
	next[key] = c
	tm.tiles.Store(&next)
	return c
}

// rangeResult counts a GET carrying Range by its outcome (200, 206, 416).
func (tm *tileMetrics) rangeResult(status int) {
	if c := tm.ranges[status]; c != nil {
		c.Inc()
	}
}

// served adds n body bytes sent on route.
func (tm *tileMetrics) served(route string, n int64) {
	if c := tm.bytes[route]; c != nil && n > 0 {
		c.Add(int(n))
	}
}
