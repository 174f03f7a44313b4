package provider

import (
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/ronhq/ron/httpx/client"
)

type breaker = client.Breaker

// errExcluded is reported to a breaker for an attempt the caller ended
// (client gone, caller's deadline): neither success nor failure.
var errExcluded = client.ErrAttemptExcluded

// health holds what the Fetcher remembers about providers: bad marks and
// breakers, both keyed by normalized base URL and LRU-bounded.
type health struct {
	badFor   time.Duration
	badMu    sync.Mutex                    // orders check-and-expire against marking
	bad      *lru.Cache[string, time.Time] // base → bad until
	breakers atomic.Pointer[lru.Cache[string, *breaker]]
	settings atomic.Pointer[client.IntervalBreakerConfig]
}

func newHealth(badFor time.Duration, s client.IntervalBreakerConfig) *health {
	h := &health{badFor: badFor}
	h.bad, _ = lru.New[string, time.Time](maxTracked) // only a size ≤ 0 errors
	h.setBreaker(s)
	return h
}

// setBreaker installs new settings and an empty breaker table.
func (h *health) setBreaker(s client.IntervalBreakerConfig) {
	h.settings.Store(&s)
	c, _ := lru.New[string, *breaker](maxTracked)
	h.breakers.Store(c)
}

// markBad skips base for badFor from now.
func (h *health) markBad(base string) {
	h.badMu.Lock()
	h.bad.Add(base, time.Now().Add(h.badFor))
	h.badMu.Unlock()
}

// isBad reports whether base is marked bad; an expired mark is forgotten
// (under badMu, so that a fresh mark made meanwhile is not removed).
func (h *health) isBad(base string) bool {
	h.badMu.Lock()
	defer h.badMu.Unlock()
	until, ok := h.bad.Peek(base)
	if !ok {
		return false
	}
	if time.Now().Before(until) {
		return true
	}
	h.bad.Remove(base)
	return false
}

// breakerFor returns base's breaker, creating it on first use.
func (h *health) breakerFor(base string) *breaker {
	c := h.breakers.Load()
	if b, ok := c.Get(base); ok {
		return b
	}
	nb := newBreaker(base, *h.settings.Load())
	if prev, ok, _ := c.PeekOrAdd(base, nb); ok {
		return prev
	}
	return nb
}

// newBreaker is the breaker of one provider: rolling counts over the
// interval (client.IntervalBreakerConfig.RollingOptions).
func newBreaker(name string, s client.IntervalBreakerConfig) *breaker {
	return client.NewBreaker(name, s.RollingOptions())
}

// worstState is the worst state of any tracked breaker: open, else
// half-open, else closed.
func (h *health) worstState() string {
	worst := client.StateClosed
	for _, b := range h.breakers.Load().Values() {
		switch b.State() {
		case client.StateOpen:
			return client.StateOpen
		case client.StateHalfOpen:
			worst = client.StateHalfOpen
		}
	}
	return worst
}

// tracked returns how many breakers are held (tests).
func (h *health) tracked() int { return h.breakers.Load().Len() }
