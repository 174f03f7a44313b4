package upstream

import (
	"errors"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/ronhq/ron/httpx"
)

// Breaker states, the values of the state label of ron_breaker_state.
const (
	StateClosed   = "closed"
	StateHalfOpen = "half_open"
	StateOpen     = "open"
)

var states = [...]string{StateClosed, StateHalfOpen, StateOpen}

// Verdicts told to the breaker about one attempt (nil is a success).
var (
	errFailed   = errors.New("upstream attempt failed")
	errExcluded = errors.New("upstream attempt abandoned by the caller")
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
func (c breakerConfig) trips(n gobreaker.Counts) bool {
	return n.ConsecutiveFailures >= c.consecutive ||
		n.Requests >= c.minRequests && float64(n.TotalFailures) >= c.ratio*float64(n.Requests)
}

// breaker is one upstream's gobreaker plus the time it last opened (for
// Retry-After). Counts are kept per cyclic interval (gobreaker's fixed
// window): "the current breaker_interval".
type breaker struct {
	cb       *gobreaker.TwoStepCircuitBreaker[struct{}]
	openFor  time.Duration
	openedAt atomic.Int64 // UnixNano of the last move to open
}

func newBreaker(name string, cfg breakerConfig) *breaker {
	b := &breaker{openFor: cfg.openFor}
	b.cb = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        name,
		MaxRequests: 1,
		Interval:    cfg.interval,
		Timeout:     cfg.openFor,
		ReadyToTrip: cfg.trips,
		// Runs under the breaker's lock: an atomic store only.
		OnStateChange: func(_ string, _, to gobreaker.State) {
			if to == gobreaker.StateOpen {
				b.openedAt.Store(time.Now().UnixNano())
			}
		},
		IsExcluded: func(err error) bool { return errors.Is(err, errExcluded) },
	})
	return b
}

// allow asks for one attempt: the verdict callback, or the 503 answer when
// the breaker refuses.
func (b *breaker) allow() (func(error), error) {
	done, err := b.cb.Allow()
	if err == nil {
		return done, nil
	}
	secs := 1 // half-open with its probe in flight
	if errors.Is(err, gobreaker.ErrOpenState) {
		secs = b.remainingOpen(time.Now())
	}
	return nil, httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable, "upstream circuit open").
		WithRetryAfter(secs).WithDetails(map[string]any{"reason": "breaker_open", "limit": "breaker"})
}

// remainingOpen is the open time left in whole seconds, rounded up, ≥ 1.
func (b *breaker) remainingOpen(now time.Time) int {
	left := b.openFor - now.Sub(time.Unix(0, b.openedAt.Load()))
	return max(1, int(math.Ceil(left.Seconds())))
}

func (b *breaker) state() string {
	switch b.cb.State() {
	case gobreaker.StateHalfOpen:
		return StateHalfOpen
	case gobreaker.StateOpen:
		return StateOpen
	}
	return StateClosed
}

// statusVerdict: 500, 502, 503 and 504 are failures, every other status a
// success.
func statusVerdict(status int) error {
	switch status {
	case http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return errFailed
	}
	return nil
}
