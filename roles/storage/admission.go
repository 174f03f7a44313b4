package storage

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/runtime"
)

// admission is the storage role's work queue in front of its two pools
// (spec/storage.md §5): a request try-enters the queue (full → 429 busy), then
// waits at most queue_timeout for a slot in its pool and holds the slot until
// its response ends. Counters and semaphores live in the handler goroutine; no
// goroutine is started per queued request.
type admission struct {
	capacity int64
	depth    atomic.Int64 // requests admitted and not yet finished (queued or running)
	get, put chan struct{}
	timeout  atomic.Int64 // queue_timeout in ns (hot-reloadable)
}

func newAdmission(m *runtime.Metrics, capacity, getWorkers, putWorkers int, timeout time.Duration) *admission {
	a := &admission{capacity: int64(capacity), get: make(chan struct{}, getWorkers), put: make(chan struct{}, putWorkers)}
	a.timeout.Store(int64(timeout))
	m.Gauge("queue_depth", func() float64 { return float64(a.depth.Load()) }, "role", roleName, "queue", "work")
	m.Gauge("queue_capacity", func() float64 { return float64(a.capacity) }, "role", roleName, "queue", "work")
	m.Gauge("storage_pool_inflight", func() float64 { return float64(len(a.get)) }, "role", roleName, "pool", "get")
	m.Gauge("storage_pool_inflight", func() float64 { return float64(len(a.put)) }, "role", roleName, "pool", "put")
	return a
}

// errBusy is the 429 every admission failure answers with.
var errBusy = httpx.NewError(http.StatusTooManyRequests, httpx.CodeBusy, "storage is busy, retry later")

// enter admits one request into pool; the returned release must be called
// when the response has ended.
func (a *admission) enter(ctx context.Context, pool chan struct{}) (release func(), err error) {
	if a.depth.Add(1) > a.capacity {
		a.depth.Add(-1)
		return nil, errBusy
	}
	select {
	case pool <- struct{}{}:
		return a.releaser(pool), nil
	default:
	}
	t := time.NewTimer(time.Duration(a.timeout.Load()))
	defer t.Stop()
	select {
	case pool <- struct{}{}:
		return a.releaser(pool), nil
	case <-t.C:
		a.depth.Add(-1)
		return nil, errBusy
	case <-ctx.Done():
		a.depth.Add(-1)
		return nil, ctx.Err()
	}
}

func (a *admission) releaser(pool chan struct{}) func() {
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			<-pool
			a.depth.Add(-1)
		}
	}
}
