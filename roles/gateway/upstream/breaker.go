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

// breakerConfig is the part of a Policy a breaker is built from.
type breakerConfig struct {
	minRequests, consecutive uint32
	ratio                    float64
	interval, openFor        time.Duration
}

func breakerConfigOf(p Policy) breakerConfig {
	return breakerConfig{
		minRequests: p.BreakerMinRequests, consecutive: p.BreakerConsecutiveFailures,
		ratio: p.BreakerFailureRatio, interval: p.BreakerInterval, openFor: p.BreakerOpenTimeout,
	}
}

// trips is the docs/gateway.md §3.8 rule: consecutive failures, or enough requests in the
// current interval with a high enough failure share.
func (c breakerConfig) trips(n client.Counts) bool {
	return n.ConsecutiveFailures >= c.consecutive ||
		n.Requests >= c.minRequests && float64(n.TotalFailures) >= c.ratio*float64(n.Requests)
}

// breaker is one upstream's breaker. Counts are kept per cyclic interval
// (a fixed window): "the current breaker_interval".
type breaker struct{ *client.Breaker }

func newBreaker(name string, cfg breakerConfig) *breaker {
	return &breaker{client.NewBreaker(name, client.BreakerOptions{Window: cfg.interval, FixedWindow: true,
		OpenFor: cfg.openFor, HalfOpenProbes: 1, Trip: cfg.trips})}
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
