package fillq

import (
	"testing"
	"time"
)

// Every delay lies within min(800 ms, 50 ms·2^n) + [0, 50 ms].
func TestRetryDelay(t *testing.T) {
	for _, c := range []struct {
		n    int
		base time.Duration
	}{{0, 50 * time.Millisecond}, {1, 100 * time.Millisecond}, {3, 400 * time.Millisecond},
		{4, 800 * time.Millisecond}, {5, 800 * time.Millisecond}, {60, 800 * time.Millisecond}} {
		for range 100 {
			if d := RetryDelay(c.n); d < c.base || d > c.base+retryBase {
				t.Fatalf("RetryDelay(%d) = %s, want %s–%s", c.n, d, c.base, c.base+retryBase)
			}
		}
	}
}
