package storage

import (
	"context"
	"net/http"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/admit"
	"github.com/ronhq/ron/runtime"
)

// admission is the storage role's work queue in front of its two pools
// (docs/storage.md §5), built on httpx/admit: a request try-enters the queue
// (full → 429 busy), then waits at most queue_timeout for a slot in its pool
// and holds the slot until its response ends. No goroutine is started per
// queued request.
type admission struct {
	q        *admit.Queue
	get, put admit.Pool
	depth    depthView   // requests admitted and not yet finished
	timeout  timeoutKnob // queue_timeout in ns (hot-reloadable)
}

func newAdmission(m *runtime.Metrics, capacity, getWorkers, putWorkers int, timeout time.Duration) *admission {
	q := admit.New(admit.Options{Role: roleName, Metrics: m, Capacity: capacity, Timeout: timeout, Busy: errBusy})
	a := &admission{q: q, get: admit.NewPool(getWorkers), put: admit.NewPool(putWorkers),
		depth: depthView{q}, timeout: timeoutKnob{q}}
	m.Gauge("storage_pool_inflight", func() float64 { return float64(len(a.get)) }, "role", roleName, "pool", "get")
	m.Gauge("storage_pool_inflight", func() float64 { return float64(len(a.put)) }, "role", roleName, "pool", "put")
	return a
}

// errBusy is the 429 every admission failure answers with.
var errBusy = httpx.NewError(http.StatusTooManyRequests, httpx.CodeBusy, "storage is busy, retry later")

// enter admits one request into pool; the returned release must be called
// when the response has ended.
func (a *admission) enter(ctx context.Context, pool admit.Pool) (release func(), err error) {
	return a.q.Enter(ctx, pool)
}

// depthView reads the queue depth.
type depthView struct{ q *admit.Queue }

// Load returns the number of requests admitted and not yet finished.
func (d depthView) Load() int64 { return d.q.Depth() }

// timeoutKnob reads and sets queue_timeout in nanoseconds.
type timeoutKnob struct{ q *admit.Queue }

// Load returns queue_timeout in ns.
func (k timeoutKnob) Load() int64 { return int64(k.q.Timeout()) }

// Store sets queue_timeout in ns.
func (k timeoutKnob) Store(ns int64) { k.q.SetTimeout(time.Duration(ns)) }
