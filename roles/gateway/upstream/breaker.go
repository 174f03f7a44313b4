package upstream

import (
	"net/http"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
)

// Verdicts told to the breaker about one attempt (nil is a success).
var (
	errFailed   = client.ErrAttemptFailed
	errExcluded = client.ErrAttemptExcluded
)

// breaker is one upstream's breaker, of the docs/gateway.md §3.8 rule:
// counts are kept per cyclic interval (a fixed window), "the current
// breaker_interval".
type breaker struct{ *client.Breaker }

func newBreaker(name string, cfg client.IntervalBreakerConfig) *breaker {
	return &breaker{client.NewBreaker(name, cfg.FixedWindowOptions())}
}

// allow asks for one attempt: the verdict callback, or the 503 answer when
// the breaker refuses (Retry-After: the open time left, 1 s while a
// half-open probe is in flight).
func (b *breaker) allow() (func(error), error) {
	done, err := b.Allow()
	if err == nil {
		return done, nil
	}
	secs := 1
	if !client.Probing(err) {
		secs = b.RemainingOpen(time.Now())
	}
	return nil, httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable, "upstream circuit open").
		WithRetryAfter(secs).WithDetails(map[string]any{"reason": "breaker_open", "limit": "breaker"})
}

func (b *breaker) state() string { return b.State() }

// statusVerdict is the breaker's verdict on a status (client.ServerFailure).
func statusVerdict(status int) error {
	if client.ServerFailure(status) {
		return errFailed
	}
	return nil
}
