package client

import (
	"fmt"
	"math"
	"net/http"
	"time"
)

// The breaker knob groups of the role sections. Each is squashed into a
// section's config struct (`koanf:",squash"`), keeps the keys that section
// documents, checks them with Validate and turns them into BreakerOptions,
// so the translation "config → breaker" of each policy is written here, once.
// The two groups cannot be one struct: their keys differ (breaker_window,
// breaker_trip_ratio, breaker_cooldown … against breaker_interval,
// breaker_failure_ratio, breaker_open_timeout …) and keys do not change.

// WindowBreakerConfig is the rolling-window breaker group of docs/index.md
// §6 and §12, used by the index for its per-peer lookup breakers.
type WindowBreakerConfig struct {
	BreakerWindow      time.Duration `koanf:"breaker_window" help:"per-peer breaker rolling window"`
	BreakerBucket      time.Duration `koanf:"breaker_bucket" help:"width of one bucket of the breaker window"`
	BreakerMinRequests int           `koanf:"breaker_min_requests" help:"requests in the window before the breaker may open"`
	BreakerTripRatio   float64       `koanf:"breaker_trip_ratio" help:"the breaker opens when more than this share of requests failed"`
	BreakerCooldown    time.Duration `koanf:"breaker_cooldown" help:"how long an open breaker stays open"`
	BreakerHalfOpen    int           `koanf:"breaker_half_open" help:"probe requests let through by a half-open breaker"`
}

// Validate checks the group: positive durations, a bucket no wider than the
// window, counts from 1 to 2³²−1 and a trip ratio in (0, 1]. An error names
// "<section>.<key>".
func (c WindowBreakerConfig) Validate(section string) error {
	return firstBad(section,
		keyCheck{c.BreakerWindow <= 0, "breaker_window", "must be positive"},
		keyCheck{c.BreakerBucket <= 0 || c.BreakerBucket > c.BreakerWindow, "breaker_bucket",
			fmt.Sprintf("must be positive and at most breaker_window (%v), got %v", c.BreakerWindow, c.BreakerBucket)},
		keyCheck{!countOK(c.BreakerMinRequests), "breaker_min_requests", fmt.Sprintf("must be at least 1, got %d", c.BreakerMinRequests)},
		keyCheck{!ratioOK(c.BreakerTripRatio), "breaker_trip_ratio", fmt.Sprintf("must be in (0, 1], got %v", c.BreakerTripRatio)},
		keyCheck{c.BreakerCooldown <= 0, "breaker_cooldown", "must be positive"},
		keyCheck{!countOK(c.BreakerHalfOpen), "breaker_half_open", fmt.Sprintf("must be at least 1, got %d", c.BreakerHalfOpen)},
	)
}

// Options are the docs/index.md §6 breaker of one peer: a rolling window of
// breaker_window in buckets of breaker_bucket; it opens when at least
// breaker_min_requests were counted and more than breaker_trip_ratio of them
// failed (every one, for a ratio of 1); it stays open breaker_cooldown, then
// lets breaker_half_open probes through. 404 is a success; every other
// status from 400 up (429 and 5xx included) and invalid answers are
// failures; cancelled attempts are not counted. c must be valid.
func (c WindowBreakerConfig) Options() BreakerOptions {
	minReq, ratio := uint32(c.BreakerMinRequests), c.BreakerTripRatio
	return BreakerOptions{
		Window: c.BreakerWindow, BucketPeriod: c.BreakerBucket, OpenFor: c.BreakerCooldown,
		HalfOpenProbes: uint32(c.BreakerHalfOpen), MinRequests: minReq, FailureRatio: ratio,
		Trip: func(n Counts) bool {
			return n.Requests >= minReq &&
				(float64(n.TotalFailures) > ratio*float64(n.Requests) || n.TotalFailures == n.Requests)
		},
		FailureStatus: func(status int) bool { return status >= 400 && status != http.StatusNotFound },
	}
}

// IntervalBreakerConfig is the interval breaker group of docs/gateway.md §3.8
// and §9, used by the gateway for its upstream links and its providers. A
// breaker trips when within its interval at least BreakerMinRequests
// attempts had a failure share ≥ BreakerFailureRatio, or after
// BreakerConsecutiveFailures failures in a row; it stays open
// BreakerOpenTimeout, then lets one probe through. Zero fields take the
// DefaultIntervalBreaker values (WithDefaults).
type IntervalBreakerConfig struct {
	BreakerMinRequests         uint32        `koanf:"breaker_min_requests" help:"requests in the interval before the failure ratio can trip a breaker"`
	BreakerFailureRatio        float64       `koanf:"breaker_failure_ratio" help:"failure share that trips a breaker"`
	BreakerConsecutiveFailures uint32        `koanf:"breaker_consecutive_failures" help:"failures in a row that trip a breaker"`
	BreakerInterval            time.Duration `koanf:"breaker_interval" help:"breaker counting interval"`
	BreakerOpenTimeout         time.Duration `koanf:"breaker_open_timeout" help:"how long an open breaker stays open"`
}

// DefaultIntervalBreaker returns the docs/gateway.md §9 defaults: 20
// requests, 0.5, 5 in a row, a 10 s interval, open 5 s.
func DefaultIntervalBreaker() IntervalBreakerConfig {
	return IntervalBreakerConfig{BreakerMinRequests: 20, BreakerFailureRatio: 0.5, BreakerConsecutiveFailures: 5,
		BreakerInterval: 10 * time.Second, BreakerOpenTimeout: 5 * time.Second}
}

// WithDefaults returns c with its zero (or negative) fields set to the
// DefaultIntervalBreaker values.
func (c IntervalBreakerConfig) WithDefaults() IntervalBreakerConfig {
	d := DefaultIntervalBreaker()
	if c.BreakerMinRequests == 0 {
		c.BreakerMinRequests = d.BreakerMinRequests
	}
	if c.BreakerFailureRatio <= 0 {
		c.BreakerFailureRatio = d.BreakerFailureRatio
	}
	if c.BreakerConsecutiveFailures == 0 {
		c.BreakerConsecutiveFailures = d.BreakerConsecutiveFailures
	}
	if c.BreakerInterval <= 0 {
		c.BreakerInterval = d.BreakerInterval
	}
	if c.BreakerOpenTimeout <= 0 {
		c.BreakerOpenTimeout = d.BreakerOpenTimeout
	}
	return c
}

// Validate checks the group: a failure ratio in (0, 1], at least one
// consecutive failure, a positive interval and open timeout
// (breaker_min_requests 0 takes the default). An error names
// "<section>.<key>".
func (c IntervalBreakerConfig) Validate(section string) error {
	return firstBad(section,
		keyCheck{!ratioOK(c.BreakerFailureRatio), "breaker_failure_ratio", fmt.Sprintf("must be within (0, 1], got %v", c.BreakerFailureRatio)},
		keyCheck{c.BreakerConsecutiveFailures < 1, "breaker_consecutive_failures", fmt.Sprintf("must be at least 1, got %d", c.BreakerConsecutiveFailures)},
		keyCheck{c.BreakerInterval <= 0 || c.BreakerOpenTimeout <= 0, "breaker_interval", "breaker_interval and breaker_open_timeout must be positive"},
	)
}

// FixedWindowOptions are the breaker of a gateway upstream link: counts
// are kept per cyclic breaker_interval (a fixed window, "the current
// interval"), with the trip rule of the type. c must have its defaults.
func (c IntervalBreakerConfig) FixedWindowOptions() BreakerOptions {
	return BreakerOptions{Window: c.BreakerInterval, FixedWindow: true, OpenFor: c.BreakerOpenTimeout, HalfOpenProbes: 1,
		Trip: func(n Counts) bool {
			return n.ConsecutiveFailures >= c.BreakerConsecutiveFailures ||
				n.Requests >= c.BreakerMinRequests && float64(n.TotalFailures) >= c.BreakerFailureRatio*float64(n.Requests)
		}}
}

// RollingOptions are the breaker of one gateway provider: counts roll over
// breaker_interval in buckets of 1 s (or the interval, if shorter), with the
// trip rule of the type over the attempts not excluded. c must have its
// defaults.
func (c IntervalBreakerConfig) RollingOptions() BreakerOptions {
	return BreakerOptions{Window: c.BreakerInterval, BucketPeriod: min(time.Second, c.BreakerInterval),
		OpenFor: c.BreakerOpenTimeout, HalfOpenProbes: 1, Trip: func(n Counts) bool {
			counted := n.Requests - min(n.TotalExclusions, n.Requests)
			return n.ConsecutiveFailures >= c.BreakerConsecutiveFailures ||
				counted >= c.BreakerMinRequests && float64(n.TotalFailures) >= c.BreakerFailureRatio*float64(counted)
		}}
}

// keyCheck is one rule of a knob group's Validate: when bad, the error is
// "<section>.<key>: <msg>".
type keyCheck struct {
	bad      bool
	key, msg string
}

// firstBad is the validator both groups share: the first failed check's
// error, or nil.
func firstBad(section string, checks ...keyCheck) error {
	for _, k := range checks {
		if k.bad {
			return fmt.Errorf("%s.%s: %s", section, k.key, k.msg)
		}
	}
	return nil
}

// ratioOK reports whether r is in (0, 1] (NaN is not).
func ratioOK(r float64) bool { return r > 0 && r <= 1 }

// countOK reports whether n is in [1, 2³²−1].
func countOK(n int) bool { return n >= 1 && int64(n) <= math.MaxUint32 }
