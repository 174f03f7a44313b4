package fillq

import (
	"math/rand/v2"
	"time"
)

// Retry backoff of an upstream GET or HEAD (docs/edge.md §7.5):
// min(800 ms, 50 ms·2^n) + U[0, 50 ms] before retry n.
const (
	retryBase = 50 * time.Millisecond
	retryMax  = 800 * time.Millisecond
)

// RetryDelay is the wait before retry n (0-based) of an upstream request:
// min(800 ms, 50 ms·2^n) plus a uniform jitter in [0, 50 ms].
func RetryDelay(n int) time.Duration {
	d := retryMax
	if n >= 0 && n < 5 {
		d = min(retryMax, retryBase<<n)
	}
	return d + rand.N(retryBase+1)
}
