package httpapi

import (
	"sync"
	"sync/atomic"

	"github.com/ronhq/ron/roles/registry/registryapi"
)

// ringSize is how many recent commits the hub keeps, so streams that keep
// up never read the log.
const ringSize = 64

// Hub fans committed versions out to the SSE streams and Watch
// subscribers. It holds no queue per subscriber: a subscriber keeps a
// cursor and reads from the hub's ring of recent commits or from the log.
// All methods are safe for concurrent use and never block on subscribers.
type Hub struct {
	a       *API
	clients atomic.Int64

	mu     sync.Mutex // guards the fields below; held for memory access only
	wake   chan struct{}
	ring   [ringSize]registryapi.Update
	ringOK [ringSize]bool
	closed bool
	done   chan struct{}
}

// newHub returns the hub of a and registers ron_registry_sse_clients.
func newHub(a *API) *Hub {
	h := &Hub{a: a, wake: make(chan struct{}), done: make(chan struct{})}
	a.opt.Metrics.Gauge("registry_sse_clients", func() float64 { return float64(h.clients.Load()) }, "role", registryapi.RoleName)
	return h
}

// Notify announces a durable commit: it is kept in the ring and every
// waiting subscriber wakes. It never blocks (the committer calls it from
// OnCommit after the snapshot swap). Versions reach subscribers in commit
// order whatever order Notify sees, since they read by cursor.
func (h *Hub) Notify(c registryapi.Committed) {
	u := registryapi.Update{Version: c.Version, PayloadB3: c.PayloadB3, CommittedAt: c.CommittedAt, CorrID: cleanCorrID(c.CorrID)}
	h.mu.Lock()
	defer h.mu.Unlock()
	i := c.Version % ringSize
	h.ring[i], h.ringOK[i] = u, true
	close(h.wake)
	h.wake = make(chan struct{})
}

// Close ends every stream (ron_registry_sse_disconnects_total
// {reason="shutdown"}) and refuses new ones with 503 draining. Idempotent.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.done)
	}
}

// Clients returns the number of open streams and Watch subscriptions.
func (h *Hub) Clients() int { return int(h.clients.Load()) }

// changed returns the channel the next Notify closes.
func (h *Hub) changed() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.wake
}

// isClosed reports whether Close was called.
func (h *Hub) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// recent returns version v from the ring.
func (h *Hub) recent(v uint64) (registryapi.Update, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := v % ringSize
	if h.ringOK[i] && h.ring[i].Version == v {
		return h.ring[i], true
	}
	return registryapi.Update{}, false
}

// acquire takes a subscriber slot unless max are taken.
func (h *Hub) acquire(max int) bool {
	for {
		n := h.clients.Load()
		if n >= int64(max) {
			return false
		}
		if h.clients.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release gives a slot back.
func (h *Hub) release() { h.clients.Add(-1) }

// cleanCorrID makes a corr id what a log record stores: printable ASCII
// without spaces, at most 64 bytes, so live and replayed events agree.
func cleanCorrID(s string) string {
	b := make([]byte, 0, min(len(s), 64))
	for i := 0; i < len(s) && len(b) < 64; i++ {
		if s[i] > 0x20 && s[i] < 0x7f {
			b = append(b, s[i])
		}
	}
	return string(b)
}
