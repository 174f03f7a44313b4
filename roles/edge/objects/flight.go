package objects

import (
	"sync"
	"time"

	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/store"
)

// flight is the one fill of an id in progress; every GET of the id that
// misses meanwhile waits for it. It is in Objects.flights from its creation
// until its outcome is known: a failure, an object too large to store, or
// the end of the stored fill. Its job is queued or running all that time,
// so the map is bounded by the work queue.
type flight struct {
	id    store.ID
	ready chan struct{} // closed once the outcome below is set

	// Set once, before ready closes; read-only afterwards.
	fill  *edgecache.Fill // the growing entry: its first verified group is in
	size  int64
	ctype string
	src   *Source // the fill's source and what it said (for the size's proof)
	probe *probe
	big   bool  // above the store limit: each request streams on its own
	err   error // the failure (an *httpx.Error); nothing was published

	// Owned by the fill job's goroutine.
	start   time.Time // the job began
	counted bool      // ron_edge_fills_total has the outcome

	once sync.Once
	mu   sync.Mutex
	// deadline is the latest deadline of the requests waiting (zero: one
	// of them has none); retries stop when they would pass it.
	deadline time.Time

	// proof is the size's proof, shared by the answers that state the size
	// before the fill verified the last group.
	proof sizeProof
}

// join returns the flight of id, creating it (leader true) when there is
// none. deadline is the caller's (zero for none).
func (o *Objects) join(id store.ID, deadline time.Time) (fl *flight, leader bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if fl := o.flights[id]; fl != nil {
		fl.extend(deadline)
		return fl, false
	}
	fl = &flight{id: id, ready: make(chan struct{}), deadline: deadline, proof: sizeProof{done: make(chan struct{})}}
	o.flights[id] = fl
	return fl, true
}

// leave removes fl from the map, so that later requests start anew (or hit
// the cache). Idempotent.
func (o *Objects) leave(fl *flight) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.flights[fl.id] == fl {
		delete(o.flights, fl.id)
	}
}

// extend makes the flight's deadline cover d.
func (fl *flight) extend(d time.Time) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if fl.deadline.IsZero() || d.IsZero() {
		fl.deadline = time.Time{}
		return
	}
	if d.After(fl.deadline) {
		fl.deadline = d
	}
}

// retryDeadline is the latest deadline of the waiting requests (zero: none).
func (fl *flight) retryDeadline() time.Time {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.deadline
}

// settle sets the outcome once and wakes the waiters; later calls are
// no-ops.
func (fl *flight) settle(set func()) {
	fl.once.Do(func() {
		set()
		close(fl.ready)
	})
}

// publish hands the waiters the growing fill of p's object from src.
func (fl *flight) publish(f *edgecache.Fill, src *Source, p *probe, ctype string) {
	fl.settle(func() { fl.fill, fl.size, fl.ctype, fl.src, fl.probe = f, p.size(), ctype, src, p })
}

// publishBig tells the waiters to stream the object on their own.
func (fl *flight) publishBig() { fl.settle(func() { fl.big = true }) }

// fail fails every waiter with err (a no-op once something was published).
func (fl *flight) fail(err error) { fl.settle(func() { fl.err = err }) }
