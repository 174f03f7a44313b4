package index

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/admit"
	"github.com/ronhq/ron/httpx/ratelimit"
	"github.com/ronhq/ron/runtime"
)

// Errors of a refused request (docs/index.md §8, docs/architecture.md §3).
var (
	errBusy     = httpx.NewError(http.StatusTooManyRequests, httpx.CodeBusy, "index is busy, retry later")
	errDraining = httpx.NewError(http.StatusServiceUnavailable, httpx.CodeDraining, "index is shutting down")
)

// workQueue is the index's work queue in front of its worker pool, after
// the listener's ingress limits and the route's capability check
// (docs/index.md §8): the optional per-IP token bucket (429 rate_limited
// with Retry-After from the bucket), then the httpx/admit queue (429 busy,
// Retry-After: 1, when the queue is full or no worker frees up within
// queue_timeout). It also tracks the requests in flight so that shutdown can
// refuse new ones (503 draining), wait for the rest, and cancel what is
// still running at the deadline.
type workQueue struct {
	met    roleMetrics
	q      *admit.Queue
	pool   atomic.Pointer[admit.Pool]
	bucket atomic.Pointer[ratelimit.Limiter] // nil = off

	abortCtx context.Context // cancelled by abort: running requests end
	abort    context.CancelFunc

	mu      sync.Mutex
	running int           // requests between begin and end
	closed  bool          // drain was called: begin refuses
	idle    chan struct{} // closed once closed && running == 0
}

func newWorkQueue(m *runtime.Metrics, cfg Config) (*workQueue, error) {
	a := &workQueue{met: roleMetrics{m}, idle: make(chan struct{}),
		q: admit.New(admit.Options{Role: roleName, Metrics: m, QueueConfig: cfg.QueueConfig, Busy: errBusy})}
	a.abortCtx, a.abort = context.WithCancel(context.Background())
	if err := a.apply(cfg); err != nil {
		a.abort()
		return nil, err
	}
	return a, nil
}

// apply sets the live keys: queue_capacity, queue_timeout,
// workers (a new pool; requests holding a slot of the old one release it
// there) and the per-IP bucket (ratelimit_rps 0 turns it off).
func (a *workQueue) apply(cfg Config) error {
	a.q.Configure(cfg.QueueConfig)
	if p := a.pool.Load(); p == nil || cap(*p) != cfg.Workers {
		pool := admit.NewPool(cfg.Workers)
		a.pool.Store(&pool)
	}
	if cfg.RatelimitRPS <= 0 {
		a.bucket.Store(nil)
		return nil
	}
	if b := a.bucket.Load(); b != nil {
		return b.SetRate(cfg.RatelimitRPS, cfg.RatelimitBurst)
	}
	b, err := ratelimit.New(ratelimit.Options{RPS: cfg.RatelimitRPS, Burst: cfg.RatelimitBurst})
	if err != nil {
		return err
	}
	a.bucket.Store(b)
	return nil
}

// middleware admits one request (route middleware, after the capability
// check). The request's context is cancelled by abort, so a lookup still
// running at the drain deadline ends and cancels its legs.
func (a *workQueue) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !a.begin() {
			return errDraining
		}
		defer a.end()
		ctx, cancel := context.WithCancel(c.Request().Context())
		defer cancel()
		defer context.AfterFunc(a.abortCtx, cancel)()
		if err := a.limitIP(c.Request()); err != nil {
			return err
		}
		release, err := a.q.Enter(ctx, *a.pool.Load())
		if err != nil {
			return a.refused(c, err)
		}
		defer release()
		c.SetRequest(c.Request().WithContext(ctx))
		return next(c)
	}
}

// refused maps a failed Enter: busy (counted under the route template),
// draining when shutdown cancelled the wait, else the context's error.
func (a *workQueue) refused(c echo.Context, err error) error {
	switch {
	case errors.Is(err, errBusy):
		a.met.busy(httpx.RouteOf(c))
	case a.abortCtx.Err() != nil:
		return errDraining
	}
	return err
}

// limitIP takes a token from the client address's bucket.
func (a *workQueue) limitIP(r *http.Request) error {
	b := a.bucket.Load()
	if b == nil {
		return nil
	}
	ok, wait := b.Allow(clientIP(r.RemoteAddr))
	if ok {
		return nil
	}
	a.met.rateLimited()
	secs := int((wait + time.Second - 1) / time.Second)
	return httpx.NewError(http.StatusTooManyRequests, httpx.CodeRateLimited,
		"request rate limit for this address exceeded").WithRetryAfter(max(secs, 1))
}

// clientIP is the host part of a remote address (the connection's peer; no
// forwarding header is trusted).
func clientIP(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return remote
	}
	return host
}

// begin counts a request in, or refuses it once drain was called.
func (a *workQueue) begin() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return false
	}
	a.running++
	return true
}

// end counts a request out.
func (a *workQueue) end() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.running--
	a.closeIdleLocked()
}

func (a *workQueue) closeIdleLocked() {
	if a.closed && a.running == 0 {
		select {
		case <-a.idle:
		default:
			close(a.idle)
		}
	}
}

// drain refuses new requests from now on (503 draining).
func (a *workQueue) drain() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	a.closeIdleLocked()
}

// inFlight returns the number of admitted requests still running.
func (a *workQueue) inFlight() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running
}

// stop drains, cancels every running request and waits for them to return,
// at most grace. It returns how many were still running when cancelled.
func (a *workQueue) stop(grace time.Duration) int {
	a.drain()
	n := a.inFlight()
	a.abort()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-a.idle:
	case <-t.C:
	}
	return n
}
