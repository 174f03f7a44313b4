package storage

import (
	"context"
	"net/http"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/admit"
	"github.com/ronhq/ron/runtime"
)

// workQueue is the storage role's work queue in front of its two worker
// pools (docs/storage.md §5), built on httpx/admit: a request try-enters the
// queue (full → 429 busy), then waits at most queue_timeout for a slot in its
// pool and holds the slot until its response ends. No goroutine is started
// per queued request.
type workQueue struct {
	q        *admit.Queue // queue_capacity, queue_timeout (hot-reloadable)
	get, put admit.Pool
}

func newWorkQueue(m *runtime.Metrics, cfg admit.QueueConfig, getWorkers, putWorkers int) *workQueue {
	q := admit.New(admit.Options{Role: roleName, Metrics: m, QueueConfig: cfg, Busy: errBusy})
	w := &workQueue{q: q, get: admit.NewPool(getWorkers), put: admit.NewPool(putWorkers)}
	m.Gauge("storage_pool_inflight", func() float64 { return float64(len(w.get)) }, "role", roleName, "pool", "get")
	m.Gauge("storage_pool_inflight", func() float64 { return float64(len(w.put)) }, "role", roleName, "pool", "put")
	return w
}

// errBusy is the 429 every refused request answers with.
var errBusy = httpx.NewError(http.StatusTooManyRequests, httpx.CodeBusy, "storage is busy, retry later")

// enter admits one request into pool; the returned release must be called
// when the response has ended.
func (w *workQueue) enter(ctx context.Context, pool admit.Pool) (release func(), err error) {
	return w.q.Enter(ctx, pool)
}
