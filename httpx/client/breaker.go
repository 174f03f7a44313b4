package client

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/ronhq/ron/httpx"
)

// BreakerOptions configure a target's circuit breaker. Zero fields take the
// defaults: the breaker opens when, within a rolling Window of 10 s (1 s
// buckets), at least MinRequests 5 attempts were made and at least
// FailureRatio 50 % of them failed, or after ConsecutiveFailures 5 failures in
// a row; it stays open OpenFor 5 s, then lets HalfOpenProbes 1 attempt
// through: success closes it, failure reopens it.
//
// Failures are attempts that got no response (connection errors, attempt or
// deadline timeouts), a 500, 502, 503 or 504, or an answer the Request's
// Validate rejected. Every other status (4xx included) is a success. Attempts
// ended by the caller cancelling its context (a lost hedge, a client gone)
// count as neither.
//
// Trip, FailureStatus and BucketPeriod let a caller express a stricter policy
// (the index's peer breakers, docs/index.md §6).
type BreakerOptions struct {
	Window              time.Duration
	MinRequests         uint32
	FailureRatio        float64
	ConsecutiveFailures uint32
	OpenFor             time.Duration
	HalfOpenProbes      uint32
	// BucketPeriod is the width of one bucket of the rolling Window
	// (default 1 s); Window is rounded up to a multiple of it.
	BucketPeriod time.Duration
	// Trip, when set, replaces the default rule (MinRequests, FailureRatio,
	// ConsecutiveFailures) deciding when the closed breaker opens.
	Trip func(Counts) bool
	// FailureStatus, when set, replaces the default classification of a
	// response status: true counts the attempt as a failure.
	FailureStatus func(status int) bool
	// OnStateChange, when set, is called after every transition with the
	// target and the state names (StateClosed, StateHalfOpen, StateOpen). It
	// runs under the breaker's lock: it must not block or do I/O.
	OnStateChange func(target, from, to string)
}

// Counts are the rolling window's counters a Trip rule sees.
type Counts struct {
	Requests            uint32 // attempts counted (excluded ones are not)
	TotalFailures       uint32
	ConsecutiveFailures uint32
}

func (b BreakerOptions) withDefaults() BreakerOptions {
	if b.Window <= 0 {
		b.Window = 10 * time.Second
	}
	if b.MinRequests == 0 {
		b.MinRequests = 5
	}
	if b.FailureRatio <= 0 {
		b.FailureRatio = 0.5
	}
	if b.ConsecutiveFailures == 0 {
		b.ConsecutiveFailures = 5
	}
	if b.OpenFor <= 0 {
		b.OpenFor = 5 * time.Second
	}
	if b.HalfOpenProbes == 0 {
		b.HalfOpenProbes = 1
	}
	if b.BucketPeriod <= 0 {
		b.BucketPeriod = time.Second
	}
	if b.Trip == nil {
		b.Trip = defaultTrip(b)
	}
	if b.FailureStatus == nil {
		b.FailureStatus = defaultFailureStatus
	}
	return b
}

// defaultTrip opens after ConsecutiveFailures failures in a row, or when at
// least MinRequests attempts were made and FailureRatio of them failed.
func defaultTrip(b BreakerOptions) func(Counts) bool {
	return func(n Counts) bool {
		return n.ConsecutiveFailures >= b.ConsecutiveFailures ||
			n.Requests >= b.MinRequests && float64(n.TotalFailures) >= b.FailureRatio*float64(n.Requests)
	}
}

// Breaker states as exported in the state label of ron_breaker_state.
const (
	StateClosed   = "closed"
	StateHalfOpen = "half_open"
	StateOpen     = "open"
)

var stateNames = [3]string{StateClosed, StateHalfOpen, StateOpen}

// ErrBreakerOpen is wrapped by the 503 upstream_unavailable error returned
// when the target's breaker refuses an attempt.
var ErrBreakerOpen = errors.New("client: circuit breaker open")

// Verdicts reported to the breaker for one attempt (nil is a success).
var (
	errAttemptFailed   = errors.New("attempt failed")
	errAttemptExcluded = errors.New("attempt cancelled by caller")
)

func (c *Client) initBreaker() {
	b := c.opt.Breaker
	for i, s := range stateNames {
		c.stateGaug[i] = c.set.GetOrCreateGauge(fmt.Sprintf(`ron_breaker_state{role="%s",target="%s",state="%s"}`,
			labelValue(c.opt.Role), labelValue(c.target), s), nil)
	}
	c.setStateGauges(gobreaker.StateClosed)
	opened := c.set.GetOrCreateCounter(fmt.Sprintf(`ron_breaker_open_total{role="%s",target="%s"}`,
		labelValue(c.opt.Role), labelValue(c.target)))
	c.breaker = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:         c.target,
		MaxRequests:  b.HalfOpenProbes,
		Interval:     b.Window,
		BucketPeriod: b.BucketPeriod,
		Timeout:      b.OpenFor,
		ReadyToTrip: func(n gobreaker.Counts) bool {
			return b.Trip(Counts{Requests: n.Requests, TotalFailures: n.TotalFailures,
				ConsecutiveFailures: n.ConsecutiveFailures})
		},
		OnStateChange: func(_ string, from, to gobreaker.State) {
			c.setStateGauges(to)
			if to == gobreaker.StateOpen {
				opened.Inc()
			}
			if b.OnStateChange != nil {
				b.OnStateChange(c.target, stateName(from), stateName(to))
			}
		},
		IsExcluded: func(err error) bool { return errors.Is(err, errAttemptExcluded) },
	})
}

// setStateGauges runs under the breaker's lock: atomic stores only.
func (c *Client) setStateGauges(s gobreaker.State) {
	cur := stateName(s)
	for i, name := range stateNames {
		v := 0.0
		if name == cur {
			v = 1
		}
		c.stateGaug[i].Set(v)
	}
}

func stateName(s gobreaker.State) string {
	switch s {
	case gobreaker.StateHalfOpen:
		return StateHalfOpen
	case gobreaker.StateOpen:
		return StateOpen
	}
	return StateClosed
}

// BreakerState returns the breaker's current state (StateClosed, StateHalfOpen
// or StateOpen), refreshing the state gauges: the open → half_open move
// happens when the breaker is next consulted, by a call or by this method.
func (c *Client) BreakerState() string {
	return stateName(c.breaker.State())
}

// breakerError is the answer when the breaker refuses an attempt.
func (c *Client) breakerError(err error) error {
	secs := int(math.Ceil(c.opt.Breaker.OpenFor.Seconds()))
	if errors.Is(err, gobreaker.ErrTooManyRequests) {
		secs = 1
	}
	env := httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable, "upstream circuit open").WithRetryAfter(secs)
	return &callError{env: env, cause: fmt.Errorf("%w: %s", ErrBreakerOpen, c.target)}
}

// statusVerdict classifies a response status for the breaker.
func (c *Client) statusVerdict(status int) error {
	if c.opt.Breaker.FailureStatus(status) {
		return errAttemptFailed
	}
	return nil
}

// defaultFailureStatus: 500, 502, 503 and 504 are failures.
func defaultFailureStatus(status int) bool {
	switch status {
	case http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}
