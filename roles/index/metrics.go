package index

import (
	"bytes"
	"context"
	"net/http"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/httpx/client/hedge"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store/kv"
)

// roleName is the role's name and the role label of its metrics.
const roleName = indexapi.RoleName

// Kinds of ron_index_writes_total (docs/index.md §13).
const (
	writeName     = "name"
	writeProvider = "provider"
	writeWithdraw = "withdraw"
)

// Task kinds of ron_tasks_*_total the role reports (lookup legs are hedge's).
const (
	kindLookupLeg = "lookup_leg"
	kindJanitor   = "janitor"
	kindProbe     = "probe"
)

// countWrite adds n to ron_index_writes_total{kind,result} with the result
// err stands for: ok, precondition_failed (412) or invalid (400, 413, 415).
// Other failures (404, 5xx, auth) are not writes and are not counted.
func (h *Handlers) countWrite(kind string, err error, n int) {
	result := writeResult(err)
	if h.Metrics == nil || result == "" || n <= 0 {
		return
	}
	h.Metrics.Counter("index_writes_total", "role", roleName, "kind", kind, "result", result).Add(n)
}

// writeResult names the result label of a write's outcome ("" = uncounted).
func writeResult(err error) string {
	if err == nil {
		return "ok"
	}
	switch httpx.AsError(err).Status {
	case http.StatusPreconditionFailed:
		return "precondition_failed"
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		return "invalid"
	}
	return ""
}

// roleMetrics are the role's own docs/index.md §13 metrics (the handlers, hedge, cache,
// admission queue and peer clients register theirs).
type roleMetrics struct{ m *runtime.Metrics }

func (r roleMetrics) counter(name string, labels ...string) *metrics.Counter {
	return r.m.Counter(name, append([]string{"role", roleName}, labels...)...)
}

func (r roleMetrics) busy(endpoint string) { r.m.BusyRejection(roleName, endpoint) }
func (r roleMetrics) rateLimited()         { r.counter("index_rate_limited_total", "reason", "ip_rate").Inc() }
func (r roleMetrics) pruned(n int)         { r.counter("index_janitor_pruned_total").Add(n) }
func (r roleMetrics) spawned(kind string)  { r.counter("tasks_spawned_total", "kind", kind).Inc() }
func (r roleMetrics) canceled(kind string) { r.counter("tasks_canceled_total", "kind", kind).Inc() }
func (r roleMetrics) ioTimeout(op string)  { r.counter("io_timeouts_total", "op", op).Inc() }
func (r roleMetrics) retry(op string)      { r.counter("backoff_retries_total", "op", op).Inc() }

// register creates every docs/index.md §13 series the role owns at zero, so that each name
// is exported before its first event, and the stored-record gauges.
func (r roleMetrics) register(names, providers func() float64) {
	r.m.Gauge("index_names", names, "role", roleName)
	r.m.Gauge("index_provider_records", providers, "role", roleName)
	r.counter("index_janitor_pruned_total")
	r.counter("index_rate_limited_total", "reason", "ip_rate")
	r.counter("resolve_deadline_hit_total")
	for _, kind := range []string{kindLookupLeg, kindJanitor, kindProbe} {
		for _, name := range []string{"tasks_spawned_total", "tasks_aborted_total", "tasks_canceled_total"} {
			r.counter(name, "kind", kind)
		}
	}
	for _, op := range []string{opPeerLookup, opDB} {
		r.counter("io_timeouts_total", "op", op)
		r.counter("backoff_retries_total", "op", op)
	}
	r.registerRequestSeries()
}

// apiRoutes are the endpoint labels of the role's admitted routes.
var apiRoutes = []string{"/names/{name}", "/names/{name}/versions", "/providers", "/providers/{b3}", "/resolve/{key}"}

// registerRequestSeries creates the per-request series at zero.
func (r roleMetrics) registerRequestSeries() {
	for _, e := range apiRoutes {
		r.m.Counter("busy_rejections_total", "role", roleName, "endpoint", e)
	}
	for _, kind := range []string{auth.KindMissing, auth.KindInvalid, auth.KindExpired, auth.KindScope} {
		r.counter("index_auth_failures_total", "kind", kind)
	}
	for _, kind := range []string{writeName, writeProvider, writeWithdraw} {
		for _, result := range []string{"ok", "precondition_failed", "invalid"} {
			r.counter("index_writes_total", "kind", kind, "result", result)
		}
	}
	for _, result := range []string{"alpha", "beta", "none"} {
		r.counter("dht_hedged_requests_total", "result", result)
	}
	for _, source := range []string{indexapi.SourceLocal, indexapi.SourcePeer, indexapi.SourceCache} {
		r.m.Histogram("resolve_latency_seconds", "role", roleName, "source", source)
	}
	r.m.Set().GetOrCreatePrometheusHistogramExt(runtime.MetricName("index_dht_lookup_ms", "role", roleName),
		hedge.DHTLookupBuckets)
}

// Ops of ron_io_timeouts_total and ron_backoff_retries_total.
const (
	opPeerLookup = "peer_lookup"
	opDB         = "db"
)

// refreshCounts recounts the stored records behind ron_index_names and
// ron_index_provider_records (a read transaction under dbTimeout).
func (r *Role) refreshCounts(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	names, records, err := countRecords(cctx, r.kv)
	if err != nil {
		if ctx.Err() == nil {
			r.Log.Warn().Err(err).Msg("counting records failed")
		}
		return
	}
	r.names.Store(names)
	r.records.Store(records)
}

// deletedMark is in a stored name record exactly when it is a tombstone
// (names are [a-z0-9.-], so the text cannot appear elsewhere).
var deletedMark = []byte(`"deleted":true`)

// countRecords counts live names (tombstones excluded) and provider records
// (expired ones not yet pruned included).
func countRecords(ctx context.Context, db kv.DB) (names, records int64, err error) {
	err = db.View(ctx, func(tx kv.Tx) error {
		if b := tx.Bucket(bucketNames); b != nil {
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if !bytes.Contains(v, deletedMark) {
					names++
				}
			}
		}
		if b := tx.Bucket(bucketProviders); b != nil {
			c := b.Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				records++
			}
		}
		return nil
	})
	return names, records, err
}
