package client

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync/atomic"
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
	// FixedWindow counts per cyclic Window (cleared at its end) instead of
	// a rolling one; BucketPeriod is then unused.
	FixedWindow bool
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

// Counts are the window's counters a Trip rule sees.
type Counts struct {
	Requests            uint32 // attempts counted (excluded ones are not)
	TotalSuccesses      uint32
	TotalFailures       uint32
	ConsecutiveFailures uint32
	TotalExclusions     uint32 // attempts reported with ErrAttemptExcluded
}

// countsOf converts gobreaker's counters.
func countsOf(n gobreaker.Counts) Counts {
	return Counts{Requests: n.Requests, TotalSuccesses: n.TotalSuccesses, TotalFailures: n.TotalFailures,
		ConsecutiveFailures: n.ConsecutiveFailures, TotalExclusions: n.TotalExclusions}
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
		b.FailureStatus = ServerFailure
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

// BreakerStates are the breaker states, in the order the state gauges list them.
var BreakerStates = [3]string{StateClosed, StateHalfOpen, StateOpen}

// ErrBreakerOpen is wrapped by the 503 upstream_unavailable error returned
// when the target's breaker refuses an attempt.
var ErrBreakerOpen = errors.New("client: circuit breaker open")

// Verdicts reported to a Breaker for one attempt (nil is a success; any
// other error is a failure, like ErrAttemptFailed).
var (
	ErrAttemptFailed   = errors.New("attempt failed")
	ErrAttemptExcluded = errors.New("attempt cancelled by caller")
)

// Breaker is a circuit breaker: the one wrapper of sony/gobreaker v2 (two
// step) in ron, for every caller that guards a peer (a Client's target, a
// gateway link, a provider). It is safe for concurrent use.
type Breaker struct {
	cb       *gobreaker.TwoStepCircuitBreaker[struct{}]
	openFor  time.Duration
	openedAt atomic.Int64 // UnixNano of the last move to open
}

// NewBreaker returns the breaker of target under opt (zero fields: the
// defaults of BreakerOptions).
func NewBreaker(target string, opt BreakerOptions) *Breaker {
	opt = opt.withDefaults()
	b := &Breaker{openFor: opt.OpenFor}
	st := gobreaker.Settings{
		Name:         target,
		MaxRequests:  opt.HalfOpenProbes,
		Interval:     opt.Window,
		BucketPeriod: opt.BucketPeriod,
		Timeout:      opt.OpenFor,
		ReadyToTrip:  func(n gobreaker.Counts) bool { return opt.Trip(countsOf(n)) },
		// Runs under the breaker's lock: atomic stores and opt's hook only.
		OnStateChange: func(_ string, from, to gobreaker.State) {
			if to == gobreaker.StateOpen {
				b.openedAt.Store(time.Now().UnixNano())
			}
			if opt.OnStateChange != nil {
				opt.OnStateChange(target, stateName(from), stateName(to))
			}
		},
		IsExcluded: func(err error) bool { return errors.Is(err, ErrAttemptExcluded) },
	}
	if opt.FixedWindow {
		st.BucketPeriod = 0
	}
	b.cb = gobreaker.NewTwoStepCircuitBreaker[struct{}](st)
	return b
}

// Allow asks for one attempt. When the breaker lets it through, done must
// be called once with the attempt's verdict (nil, ErrAttemptFailed or
// another error, ErrAttemptExcluded). Otherwise err wraps ErrBreakerOpen,
// and Probing reports whether it refused because its half-open probes are
// in flight rather than because it is open.
func (b *Breaker) Allow() (done func(error), err error) {
	done, err = b.cb.Allow()
	if err != nil {
		return nil, &refusal{probing: errors.Is(err, gobreaker.ErrTooManyRequests)}
	}
	return done, nil
}

// refusal is Allow's error.
type refusal struct{ probing bool }

func (r *refusal) Error() string { return ErrBreakerOpen.Error() }
func (r *refusal) Unwrap() error { return ErrBreakerOpen }

// Probing reports whether err, from Allow, is a half-open breaker's
// refusal while its probes are in flight.
func Probing(err error) bool {
	var r *refusal
	return errors.As(err, &r) && r.probing
}

// State is the breaker's current state (StateClosed, StateHalfOpen or
// StateOpen); the open → half_open move happens when the breaker is
// consulted, by Allow or by State.
func (b *Breaker) State() string { return stateName(b.cb.State()) }

// Counts are the counters of the current window.
func (b *Breaker) Counts() Counts { return countsOf(b.cb.Counts()) }

// OpenFor is how long the breaker stays open before it lets a probe through.
func (b *Breaker) OpenFor() time.Duration { return b.openFor }

// RemainingOpen is the open time left at now, in whole seconds rounded up,
// at least 1.
func (b *Breaker) RemainingOpen(now time.Time) int {
	left := b.openFor - now.Sub(time.Unix(0, b.openedAt.Load()))
	return max(1, int(math.Ceil(left.Seconds())))
}

func (c *Client) initBreaker() {
	b := c.opt.Breaker
	for i, s := range BreakerStates {
		c.stateGaug[i] = c.set.GetOrCreateGauge(fmt.Sprintf(`ron_breaker_state{role="%s",target="%s",state="%s"}`,
			labelValue(c.opt.Role), labelValue(c.target), s), nil)
	}
	c.setStateGauges(StateClosed)
	opened := c.set.GetOrCreateCounter(fmt.Sprintf(`ron_breaker_open_total{role="%s",target="%s"}`,
		labelValue(c.opt.Role), labelValue(c.target)))
	hook := b.OnStateChange
	b.OnStateChange = func(target, from, to string) {
		c.setStateGauges(to)
		if to == StateOpen {
			opened.Inc()
		}
		if hook != nil {
			hook(target, from, to)
		}
	}
	c.breaker = NewBreaker(c.target, b)
}

// setStateGauges runs under the breaker's lock: atomic stores only.
func (c *Client) setStateGauges(cur string) {
	for i, name := range BreakerStates {
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
	return c.breaker.State()
}

// breakerError is the answer when the breaker refuses an attempt.
func (c *Client) breakerError(err error) error {
	secs := int(math.Ceil(c.breaker.OpenFor().Seconds()))
	if Probing(err) {
		secs = 1
	}
	env := httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable, "upstream circuit open").WithRetryAfter(secs)
	return &callError{env: env, cause: fmt.Errorf("%w: %s", ErrBreakerOpen, c.target)}
}

// statusVerdict classifies a response status for the breaker.
func (c *Client) statusVerdict(status int) error {
	if c.opt.Breaker.FailureStatus(status) {
		return ErrAttemptFailed
	}
	return nil
}

// ServerFailure is the default classification of a status for a breaker:
// 500, 502, 503 and 504 are failures, every other status a success.
func ServerFailure(status int) bool {
	switch status {
	case http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}
