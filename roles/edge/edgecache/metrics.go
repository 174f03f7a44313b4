package edgecache

import (
	"github.com/ronhq/ron/roles/edge/edgeapi"
	"github.com/ronhq/ron/runtime"
)

// registerMetrics exports ron_edge_cache_bytes and ron_edge_cache_entries
// (gauges read at scrape time) and ron_edge_cache_evictions_total, all with
// role="edge". A nil m gets a private set.
func (c *Cache) registerMetrics(m *runtime.Metrics) {
	if m == nil {
		m = runtime.NewMetrics(nil)
	}
	c.evictions = m.Counter("edge_cache_evictions_total", "role", edgeapi.RoleName)
	m.Gauge("edge_cache_bytes", func() float64 {
		return float64(c.Stats().Bytes)
	}, "role", edgeapi.RoleName)
	m.Gauge("edge_cache_entries", func() float64 {
		return float64(c.Stats().Entries)
	}, "role", edgeapi.RoleName)
}
