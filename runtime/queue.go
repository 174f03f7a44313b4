package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/VictoriaMetrics/metrics"
)

// Errors returned by Queue.
var (
	// ErrBusy: the queue is full under the Reject policy (HTTP 429 busy).
	ErrBusy = errors.New("runtime: queue full")
	// ErrClosed: the queue was closed (HTTP 503 draining).
	ErrClosed = errors.New("runtime: queue closed")
)

// Policy is a queue's overflow policy.
type Policy int

// Overflow policies.
const (
	// Reject fails a push on a full queue with ErrBusy.
	Reject Policy = iota
	// DropOldest evicts the oldest item to make room; counted in
	// ron_queue_dropped_total.
	DropOldest
	// Block waits for room until the push's ctx ends.
	Block
)

var policyNames = [...]string{"reject", "drop_oldest", "block"}

// String returns the config spelling: reject, drop_oldest or block.
func (p Policy) String() string {
	if p < 0 || int(p) >= len(policyNames) {
		return fmt.Sprintf("Policy(%d)", int(p))
	}
	return policyNames[p]
}

// ParsePolicy parses the config spelling of a policy.
func ParsePolicy(s string) (Policy, error) {
	for i, n := range policyNames {
		if n == s {
			return Policy(i), nil
		}
	}
	return 0, fmt.Errorf("runtime: unknown queue policy %q (want reject, drop_oldest or block)", s)
}

// Queue is a bounded FIFO over a buffered channel with a named overflow
// policy. It never holds more than its capacity and never buffers
// elsewhere. It exports ron_queue_depth{role,queue} and
// ron_queue_capacity{role,queue}, and ron_queue_dropped_total{role,queue}
// for DropOldest evictions. Safe for concurrent use by any number of
// producers and consumers.
type Queue[T any] struct {
	ch      chan T
	policy  Policy
	onDrop  func(T)
	dropped *metrics.Counter

	pushMu sync.Mutex // DropOldest only: makes the evict+send pair atomic among producers

	closeOnce sync.Once
	closed    chan struct{}
}

// QueueOption configures a Queue.
type QueueOption[T any] func(*Queue[T])

// OnDrop sets a callback receiving each item Push evicts under DropOldest.
// It runs on the pushing goroutine and must not block.
func OnDrop[T any](fn func(T)) QueueOption[T] { return func(q *Queue[T]) { q.onDrop = fn } }

// NewQueue returns an empty queue named name of role with the given
// capacity (at least 1; it panics otherwise) and policy.
func NewQueue[T any](m *Metrics, role, name string, capacity int, policy Policy, opts ...QueueOption[T]) *Queue[T] {
	if capacity < 1 {
		panic(fmt.Sprintf("runtime: queue %s/%s: capacity %d < 1", role, name, capacity))
	}
	m = m.orNew()
	q := &Queue[T]{
		ch:      make(chan T, capacity),
		policy:  policy,
		dropped: m.Counter("queue_dropped_total", "role", role, "queue", name),
		closed:  make(chan struct{}),
	}
	for _, o := range opts {
		o(q)
	}
	m.Gauge("queue_depth", func() float64 { return float64(len(q.ch)) }, "role", role, "queue", name)
	m.Gauge("queue_capacity", func() float64 { return float64(cap(q.ch)) }, "role", role, "queue", name)
	return q
}

// Push adds v according to the policy: Reject returns ErrBusy when full;
// DropOldest evicts the oldest item (passed to the OnDrop callback) and
// never fails for lack of room; Block waits for room until ctx ends and
// then returns ctx.Err(). Every policy returns ErrClosed after Close (a
// push racing with Close may still land; Pop drains it).
func (q *Queue[T]) Push(ctx context.Context, v T) error {
	if q.policy == Block {
		return q.pushBlock(ctx, v)
	}
	old, dropped, err := q.Offer(v)
	if dropped && q.onDrop != nil {
		q.onDrop(old)
	}
	return err
}

// Offer adds v without blocking. Under DropOldest a full queue evicts its
// oldest item, which Offer returns with dropped = true (the OnDrop callback
// is not called); under Reject and Block a full queue returns ErrBusy.
func (q *Queue[T]) Offer(v T) (old T, dropped bool, err error) {
	if q.isClosed() {
		return old, false, ErrClosed
	}
	if q.policy != DropOldest {
		select {
		case q.ch <- v:
			return old, false, nil
		default:
			return old, false, ErrBusy
		}
	}
	return q.offerDropOldest(v)
}

// offerDropOldest sends v, evicting the oldest item if the queue is full.
// Only producers take pushMu, and consumers only free room, so after one
// eviction the send succeeds; both channel operations are non-blocking.
func (q *Queue[T]) offerDropOldest(v T) (old T, dropped bool, err error) {
	q.pushMu.Lock()
	defer q.pushMu.Unlock()
	for {
		select {
		case q.ch <- v:
			return old, dropped, nil
		default:
		}
		select {
		case old = <-q.ch:
			dropped = true
			q.dropped.Inc()
		default:
		}
	}
}

// pushBlock waits for room, ctx's end or Close.
func (q *Queue[T]) pushBlock(ctx context.Context, v T) error {
	if q.isClosed() {
		return ErrClosed
	}
	select {
	case q.ch <- v:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-q.closed:
		return ErrClosed
	}
}

// Pop removes the oldest item, waiting until one arrives, ctx ends
// (ctx.Err()), or the queue is closed and empty (ErrClosed). Items pushed
// before Close are still delivered after it.
func (q *Queue[T]) Pop(ctx context.Context) (T, error) {
	select {
	case v := <-q.ch:
		return v, nil
	default:
	}
	select {
	case v := <-q.ch:
		return v, nil
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	case <-q.closed:
		if v, ok := q.TryPop(); ok {
			return v, nil
		}
		var zero T
		return zero, ErrClosed
	}
}

// TryPop removes the oldest item if there is one, without waiting.
func (q *Queue[T]) TryPop() (T, bool) {
	select {
	case v := <-q.ch:
		return v, true
	default:
		var zero T
		return zero, false
	}
}

// Len returns the number of queued items.
func (q *Queue[T]) Len() int { return len(q.ch) }

// Cap returns the capacity.
func (q *Queue[T]) Cap() int { return cap(q.ch) }

// Policy returns the overflow policy.
func (q *Queue[T]) Policy() Policy { return q.policy }

// Close stops the queue taking work: later pushes return ErrClosed, blocked
// pushes wake with ErrClosed, and pops drain what is left, then return
// ErrClosed. Close is idempotent.
func (q *Queue[T]) Close() { q.closeOnce.Do(func() { close(q.closed) }) }

// Closed reports whether Close was called.
func (q *Queue[T]) Closed() bool { return q.isClosed() }

func (q *Queue[T]) isClosed() bool {
	select {
	case <-q.closed:
		return true
	default:
		return false
	}
}
