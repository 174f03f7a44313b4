package storage

import (
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
)

const roleName = storageapi.RoleName

// roleMetrics holds the storage role's own metrics (docs/storage.md §8).
type roleMetrics struct {
	m *runtime.Metrics
}

func (r roleMetrics) counter(name string, labels ...string) *metrics.Counter {
	return r.m.Counter(name, append([]string{"role", roleName}, labels...)...)
}

func (r roleMetrics) write(result string) { r.counter("storage_writes_total", "result", result).Inc() }
func (r roleMetrics) bytesIn(route string, n int64) {
	r.counter("storage_bytes_in_total", "route", route).Add(int(n))
}
func (r roleMetrics) bytesOut(route string, n int64) {
	r.counter("storage_bytes_out_total", "route", route).Add(int(n))
}
func (r roleMetrics) ioTimeout(op string) { r.counter("io_timeouts_total", "op", op).Inc() }
func (r roleMetrics) aborted(kind string) { r.counter("tasks_aborted_total", "kind", kind).Inc() }
func (r roleMetrics) spawned(kind string) { r.counter("tasks_spawned_total", "kind", kind).Inc() }
func (r roleMetrics) corruption(kind string) {
	r.counter("storage_corruptions_total", "kind", kind).Inc()
}
func (r roleMetrics) sidecarUpgrade(result string) {
	r.counter("storage_sidecar_upgrades_total", "result", result).Inc()
}
func (r roleMetrics) authFailure(kind string) {
	r.counter("storage_auth_failures_total", "kind", kind).Inc()
}
func (r roleMetrics) announce(result string, n int) {
	r.counter("storage_announces_total", "result", result).Add(n)
}

// reprovideDuration sets ron_storage_reprovide_last_duration_seconds.
func (r roleMetrics) reprovideDuration(d time.Duration) {
	r.m.Gauge("storage_reprovide_last_duration_seconds", nil, "role", roleName).Set(d.Seconds())
}

func (r roleMetrics) chunksVerified() *metrics.Counter {
	return r.counter("storage_chunks_verified_total")
}
func (r roleMetrics) putDuration() *metrics.Histogram {
	return r.m.Histogram("storage_put_duration_seconds", "role", roleName)
}
func (r roleMetrics) getTTFB(rangeKind string) *metrics.Histogram {
	return r.m.Histogram("storage_get_ttfb_seconds", "role", roleName, "range", rangeKind)
}
func (r roleMetrics) busy(endpoint string) { r.m.BusyRejection(roleName, endpoint) }

// gauge registers a callback gauge ron_<name>{role="storage"}.
func (r roleMetrics) gauge(name string, fn func() float64) {
	r.m.Gauge(name, fn, "role", roleName)
}
