package runtime

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// Backoff computes exponential delays with jitter: attempt n waits
// Base·Factor^n, capped at Max, then scaled by a uniform factor in
// [1-Jitter, 1+Jitter) and finally clamped to Max, so no delay exceeds Max.
type Backoff struct {
	Base, Max      time.Duration
	Factor, Jitter float64
}

// DefaultBackoff is the restart policy of docs/architecture.md §3: base 100 ms,
// factor 2, cap 30 s, ±20 % jitter.
var DefaultBackoff = Backoff{Base: 100 * time.Millisecond, Max: 30 * time.Second, Factor: 2, Jitter: 0.2}

// Delay returns the wait before retry number attempt (0-based). rnd returns
// uniform values in [0, 1); nil uses math/rand/v2. Negative attempts count
// as 0.
func (b Backoff) Delay(attempt int, rnd func() float64) time.Duration {
	if rnd == nil {
		rnd = rand.Float64
	}
	d := b.nominal(attempt)
	if b.Jitter > 0 {
		d *= 1 + b.Jitter*(2*rnd()-1)
	}
	if b.Max > 0 && d > float64(b.Max) {
		d = float64(b.Max)
	}
	return time.Duration(d)
}

// nominal is Base·Factor^attempt capped at Max, before jitter.
func (b Backoff) nominal(attempt int) float64 {
	attempt = max(attempt, 0)
	d := float64(b.Base) * math.Pow(b.Factor, float64(attempt))
	if b.Max > 0 && (d > float64(b.Max) || math.IsInf(d, 0) || math.IsNaN(d)) {
		d = float64(b.Max)
	}
	return d
}

// CrashBudget counts crashes in a sliding window: it is exceeded when more
// than Limit crashes happened within the last Window. It keeps only the
// newest Limit+1 timestamps, so its memory is bounded. Safe for concurrent
// use. The clock is injectable; the default, time.Now, is the fake clock
// inside a testing/synctest bubble.
type CrashBudget struct {
	limit  int
	window time.Duration
	now    func() time.Time

	mu    sync.Mutex
	times []time.Time // newest last, at most limit+1
}

// NewCrashBudget returns a budget of limit crashes per window; now nil
// means time.Now.
func NewCrashBudget(limit int, window time.Duration, now func() time.Time) *CrashBudget {
	if now == nil {
		now = time.Now
	}
	return &CrashBudget{limit: limit, window: window, now: now}
}

// Record notes one crash at the current time.
func (c *CrashBudget) Record() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.times = append(c.times, c.now())
	if len(c.times) > c.limit+1 {
		c.times = append(c.times[:0], c.times[len(c.times)-c.limit-1:]...)
	}
}

// Exceeded reports whether more than the limit of crashes happened within
// the window ending now.
func (c *CrashBudget) Exceeded() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	cutoff := c.now().Add(-c.window)
	n := 0
	for _, t := range c.times {
		if t.After(cutoff) {
			n++
		}
	}
	return n > c.limit
}

// Sleep waits d or until ctx ends, whichever is first, and reports whether
// the whole of d elapsed. It uses a timer, so testing/synctest controls it.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
