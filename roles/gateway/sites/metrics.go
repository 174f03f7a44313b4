package sites

import (
	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/roles/gateway/gatewayapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
)

// siteMetrics are the /n metrics, all with role="gateway":
// ron_gateway_site_size_mismatch_total (entries served with another size
// than their manifest's), ron_gateway_site_manifest_rejected_total
// (manifests refused: too large or not ManifestV1), and the gauges
// ron_gateway_site_manifest_cache_entries / _bytes (the manifest LRU).
type siteMetrics struct {
	sizeMismatch *metrics.Counter
	rejected     *metrics.Counter
}

const metricRole = gatewayapi.RoleName

func newSiteMetrics(m *runtime.Metrics, cache *weightedLRU[store.ID, *site]) siteMetrics {
	if m == nil {
		m = runtime.NewMetrics(nil)
	}
	m.Gauge("gateway_site_manifest_cache_entries", func() float64 {
		n, _ := cache.Stats()
		return float64(n)
	}, "role", metricRole)
	m.Gauge("gateway_site_manifest_cache_bytes", func() float64 {
		_, w := cache.Stats()
		return float64(w)
	}, "role", metricRole)
	return siteMetrics{
		sizeMismatch: m.Counter("gateway_site_size_mismatch_total", "role", metricRole),
		rejected:     m.Counter("gateway_site_manifest_rejected_total", "role", metricRole),
	}
}
