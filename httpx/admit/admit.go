// Package admit is the shared work-queue admission of ron's roles
// (docs/architecture.md §3, docs/storage.md §5, docs/index.md §8): a request
// try-enters a bounded queue (full → ErrBusy at once), then waits at most the
// queue timeout for a slot in a worker pool and holds the slot until its
// response has ended.
//
// Nothing is buffered and no goroutine is started per request: the queue is a
// depth counter the handler goroutine increments and decrements, and a pool is
// a counting semaphore (a buffered channel of slots) the handler goroutine
// sends into and receives from. QueueConfig is the queue_capacity and
// queue_timeout key group the storage and index sections share.
package admit

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/runtime"
)

// ErrBusy is the default rejection: 429 busy with Retry-After: 1.
var ErrBusy = httpx.NewError(http.StatusTooManyRequests, httpx.CodeBusy, "busy, retry later")

// Pool is a worker pool: a counting semaphore of cap(p) slots; len(p) is the
// number of slots taken. Only Queue.Enter and the release it returns touch it.
type Pool chan struct{}

// NewPool returns a pool of workers slots (at least 1).
func NewPool(workers int) Pool { return make(Pool, max(workers, 1)) }

// Options configure a Queue.
type Options struct {
	Role    string           // metric role label
	Name    string           // metric queue label; default "work"
	Metrics *runtime.Metrics // nil: a private set
	// QueueConfig holds the capacity (at least 1 is used) and the longest
	// wait for a pool slot (≤ 0 means no wait).
	QueueConfig
	// Busy is the error returned on rejection; default ErrBusy.
	Busy error
}

// Queue is the admission queue. It exports ron_queue_depth{role,queue},
// ron_queue_capacity{role,queue} and ron_queue_dropped_total{role,queue}
// (always 0: a reject queue drops nothing it accepted; rejections are the
// caller's ron_busy_rejections_total{endpoint}). Safe for concurrent use;
// capacity and timeout can change live.
type Queue struct {
	busy     error
	capacity atomic.Int64
	depth    atomic.Int64 // admitted and not yet released
	timeout  atomic.Int64 // ns
}

// New returns an empty queue and registers its metrics.
func New(opt Options) *Queue {
	if opt.Name == "" {
		opt.Name = "work"
	}
	if opt.Busy == nil {
		opt.Busy = ErrBusy
	}
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	q := &Queue{busy: opt.Busy}
	q.Configure(opt.QueueConfig)
	m, labels := opt.Metrics, []string{"role", opt.Role, "queue", opt.Name}
	m.Gauge("queue_depth", func() float64 { return float64(q.Depth()) }, labels...)
	m.Gauge("queue_capacity", func() float64 { return float64(q.Capacity()) }, labels...)
	m.Counter("queue_dropped_total", labels...)
	return q
}

// Depth returns the number of requests admitted and not yet released.
func (q *Queue) Depth() int64 { return q.depth.Load() }

// Capacity returns the queue's capacity.
func (q *Queue) Capacity() int64 { return q.capacity.Load() }

// setCapacity changes the capacity (at least 1). Requests already admitted
// stay admitted when it shrinks.
func (q *Queue) setCapacity(n int) { q.capacity.Store(int64(max(n, 1))) }

// Configure sets the capacity (at least 1; requests already admitted stay
// admitted when it shrinks) and the longest wait for a slot (≤ 0: no wait;
// later waits use it) from c: the one way a role applies, and hot-reloads,
// its queue_capacity and queue_timeout.
func (q *Queue) Configure(c QueueConfig) {
	q.setCapacity(c.QueueCapacity)
	q.setTimeout(c.QueueTimeout)
}

// Timeout returns the longest wait for a slot.
func (q *Queue) Timeout() time.Duration { return time.Duration(q.timeout.Load()) }

// setTimeout changes the longest wait for a slot; later waits use it.
func (q *Queue) setTimeout(d time.Duration) { q.timeout.Store(int64(max(d, 0))) }

// Enter admits one request into pool p. When the queue is full it returns
// the Busy error at once; otherwise it waits for a slot of p for at most the
// timeout (Busy error after that) or until ctx ends (ctx.Err()). On success
// release must be called once the response has ended; calling it again is a
// no-op.
func (q *Queue) Enter(ctx context.Context, p Pool) (release func(), err error) {
	if q.depth.Add(1) > q.capacity.Load() {
		q.depth.Add(-1)
		return nil, q.busy
	}
	select {
	case p <- struct{}{}:
		return q.releaser(p), nil
	default:
	}
	if err := q.wait(ctx, p); err != nil {
		q.depth.Add(-1)
		return nil, err
	}
	return q.releaser(p), nil
}

// wait blocks for a slot of p, the timeout or ctx.
func (q *Queue) wait(ctx context.Context, p Pool) error {
	d := q.Timeout()
	if d <= 0 {
		return q.busy
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case p <- struct{}{}:
		return nil
	case <-t.C:
		return q.busy
	case <-ctx.Done():
		return ctx.Err()
	}
}

// releaser frees the slot taken in p and the queue place, once.
func (q *Queue) releaser(p Pool) func() {
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			<-p
			q.depth.Add(-1)
		}
	}
}
