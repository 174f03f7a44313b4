package live

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/roles/edge/httpcache"
)

// errOverflow: a body of unknown length grew past the store limit; the
// fill is dropped and the requesting client gets the rest streamed.
var errOverflow = errors.New("live: body larger than the store limit")

// outcomeKind says what an upstream exchange produced.
type outcomeKind uint8

const (
	// outEntry: a response that is (being) stored; every client it matches
	// is served from it.
	outEntry outcomeKind = iota + 1
	// outPass: a response only the requesting client may have (not
	// stored); it claims it from the flight.
	outPass
	// outFailed: no response; err is the answer unless a stale entry may
	// be served.
	outFailed
	// outRetry: nothing was fetched; look the cache up again.
	outRetry
)

// outcome is the result of a flight, published once at the origin's
// response headers.
type outcome struct {
	kind    outcomeKind
	st      *httpcache.Stored // outEntry: the response to serve (read-only)
	fill    *edgecache.Fill   // outEntry: its body as it is written; nil after a 304
	asset   edgecache.Asset   // outEntry after a 304: the stored body
	status  int               // the origin's status
	stored  bool              // outEntry: the answer was stored
	lookup  string            // ron_edge_cache_lookups_total result of a validation
	err     error             // outFailed: the answer
	failure httpcache.Failure // outFailed: how the origin failed (0: not an origin failure)
}

// handoff is the rest of a body whose fill overflowed: bytes [0, prefix)
// are in fill, then pending, then u's body.
type handoff struct {
	fill    *edgecache.Fill
	prefix  int64
	pending []byte
	u       *upstreamResp
}

// interimResp is a 1xx response for the requesting client.
type interimResp struct {
	code   int
	header http.Header
}

// flight is one upstream exchange that clients wait for (docs/edge.md §7.5
// coalescing). The leader is the client whose request it sends; waiters
// join while it is registered.
type flight struct {
	key     string // "" when not registered (a request sent alone)
	done    chan struct{}
	once    sync.Once
	out     outcome
	interim chan interimResp // to the leader; never blocks the sender

	mu         sync.Mutex
	leaderGone bool
	pass       *upstreamResp           // outPass until the leader claims it
	over       *handoff                // after an overflow, until the leader claims it
	wake       context.CancelCauseFunc // wakes the leader's reads at an overflow
}

func newFlight(key string) *flight {
	return &flight{key: key, done: make(chan struct{}), interim: make(chan interimResp, 4)}
}

// publish sets the outcome once and wakes every waiter.
func (f *flight) publish(o outcome) {
	f.once.Do(func() {
		f.out = o
		close(f.done)
	})
}

// failed publishes an outFailed outcome.
func (f *flight) failed(err error, failure httpcache.Failure) {
	f.publish(outcome{kind: outFailed, err: err, failure: failure})
}

// sendInterim offers a 1xx response to the leader, dropping it when the
// leader is not keeping up (interim responses are advisory).
func (f *flight) sendInterim(code int, h http.Header) {
	if code != http.StatusProcessing && code != http.StatusEarlyHints {
		return
	}
	select {
	case f.interim <- interimResp{code: code, header: h.Clone()}:
	default:
	}
}

// givePass hands u to the leader; false (u closed) when the leader left.
func (f *flight) givePass(u *upstreamResp) bool {
	f.mu.Lock()
	gone := f.leaderGone
	if !gone {
		f.pass = u
	}
	f.mu.Unlock()
	if gone {
		u.Close()
	}
	return !gone
}

// claimPass takes the outPass response (nil when already taken).
func (f *flight) claimPass() *upstreamResp {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.pass
	f.pass = nil
	return u
}

// giveOverflow hands the rest of an overflowing body to the leader and
// wakes its reads; when the leader left, the fill is aborted and u closed.
func (f *flight) giveOverflow(h *handoff) {
	f.mu.Lock()
	gone, wake := f.leaderGone, f.wake
	if !gone {
		f.over = h
	}
	f.mu.Unlock()
	if gone {
		h.close()
		return
	}
	if wake != nil {
		wake(errOverflow)
	}
}

// watchOverflow registers the leader's wake-up; true when an overflow is
// already waiting.
func (f *flight) watchOverflow(wake context.CancelCauseFunc) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wake = wake
	return f.over != nil
}

// claimOverflow takes the overflow hand-off (nil when there is none).
func (f *flight) claimOverflow() *handoff {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.over
	f.over = nil
	return h
}

// leave marks the leader gone and releases what it did not claim.
func (f *flight) leave() {
	f.mu.Lock()
	f.leaderGone = true
	u, h := f.pass, f.over
	f.pass, f.over, f.wake = nil, nil, nil
	f.mu.Unlock()
	if u != nil {
		u.Close()
	}
	if h != nil {
		h.close()
	}
}

// close drops a hand-off nobody will read.
func (h *handoff) close() {
	h.fill.Abort(errOverflow)
	h.u.Close()
}

// flights registers the flights in progress by flight key.
type flights struct {
	mu sync.Mutex
	m  map[string]*flight
}

// join returns the flight registered under key, or registers a new one
// whose leader the caller is.
func (fs *flights) join(key string) (f *flight, leader bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f := fs.m[key]; f != nil {
		return f, false
	}
	f = newFlight(key)
	fs.m[key] = f
	return f, true
}

// remove unregisters f (later requests start their own exchange).
func (fs *flights) remove(f *flight) {
	if f.key == "" {
		return
	}
	fs.mu.Lock()
	if fs.m[f.key] == f {
		delete(fs.m, f.key)
	}
	fs.mu.Unlock()
}

// flightKey is the coalescing key of a request (docs/edge.md §7.5): the cache key plus,
// once a Vary is known from a stored variant, the request's values of the
// fields it names.
func flightKey(key string, variants []edgecache.Asset, h http.Header) string {
	if len(variants) == 0 || len(variants[0].Stored.Selecting) == 0 {
		return key
	}
	var b strings.Builder
	b.WriteString(key)
	for _, sel := range variants[0].Stored.Selecting {
		b.WriteByte(0)
		b.WriteString(sel.Name)
		if v, ok := httpcache.NormalizedValue(h, sel.Name); ok {
			b.WriteByte('=')
			b.WriteString(v)
		}
	}
	return b.String()
}

// droppedError is the answer to a job the queue dropped.
func droppedError(err error) error {
	if errors.Is(err, fillq.ErrDraining) {
		return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeDraining, "the edge is shutting down")
	}
	return httpx.NewError(http.StatusGatewayTimeout, httpx.CodeTimeout, "deadline passed while the fill was queued")
}
