package upstream

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
)

// get makes one GET and returns the status (0 on error) and the error.
func get(t *testing.T, ctx context.Context, l *Link) (int, *httpx.Error) {
	t.Helper()
	resp, err := l.Do(ctx, Call{Method: "GET", Path: "/o/x"})
	if err != nil {
		var he *httpx.Error
		if !errors.As(err, &he) {
			t.Fatalf("error %T %v is not *httpx.Error", err, err)
		}
		return 0, he
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func breakerGauge(l *Link, state string) float64 {
	return metric(l, `ron_breaker_state{role="gateway",state="`+state+`",target="storage"}`)
}

func TestBreakerConsecutiveFailuresOpenThenProbe(t *testing.T) {
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &script{acts: []int{500}}
				l := w.link(t, s, Options{})
				for i := range 5 {
					if st, _ := get(t, context.Background(), l); st != 500 {
						t.Fatalf("call %d: status %d", i, st)
					}
					if want := map[bool]string{true: client.StateOpen, false: client.StateClosed}[i == 4]; l.BreakerState() != want {
						t.Fatalf("after %d failures: %s", i+1, l.BreakerState())
					}
				}
				if breakerGauge(l, client.StateOpen) != 1 || breakerGauge(l, client.StateClosed) != 0 {
					t.Fatalf("gauges: %v", l.met.m.Values())
				}
				_, he := get(t, context.Background(), l)
				checkBreakerError(t, he, 5)
				time.Sleep(2 * time.Second)
				_, he = get(t, context.Background(), l)
				checkBreakerError(t, he, 3)
				time.Sleep(2500 * time.Millisecond)
				_, he = get(t, context.Background(), l)
				checkBreakerError(t, he, 1) // 0.5 s left, rounded up
				if s.count() != 5 {
					t.Fatalf("upstream called %d times while open", s.count())
				}
				time.Sleep(500*time.Millisecond + time.Nanosecond) // gobreaker: half-open strictly after the timeout
				if l.BreakerState() != client.StateHalfOpen || breakerGauge(l, client.StateHalfOpen) != 1 {
					t.Fatalf("after open timeout: %s", l.BreakerState())
				}
				s.mu.Lock()
				s.acts = []int{200}
				s.mu.Unlock()
				if st, _ := get(t, context.Background(), l); st != 200 || l.BreakerState() != client.StateClosed {
					t.Fatalf("probe: %d, state %s", st, l.BreakerState())
				}
			})
		})
	}
}

func checkBreakerError(t *testing.T, he *httpx.Error, retryAfter int) {
	t.Helper()
	if he == nil || he.Status != http.StatusServiceUnavailable || he.Code != httpx.CodeUpstreamUnavailable ||
		he.RetryAfter != retryAfter || he.Details["reason"] != "breaker_open" {
		t.Fatalf("breaker error %+v, want 503 upstream_unavailable Retry-After %d reason breaker_open", he, retryAfter)
	}
}

func TestBreakerHalfOpenProbeFailureReopens(t *testing.T) {
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &script{acts: []int{502}}
				l := w.link(t, s, Options{Policy: Policy{MaxAttempts: 1}})
				for range 5 {
					get(t, context.Background(), l)
				}
				time.Sleep(5*time.Second + time.Nanosecond)
				if st, _ := get(t, context.Background(), l); st != 502 || l.BreakerState() != client.StateOpen {
					t.Fatalf("probe: %d, state %s", st, l.BreakerState())
				}
				_, he := get(t, context.Background(), l)
				checkBreakerError(t, he, 5)
			})
		})
	}
}

func TestBreakerFailureRatio(t *testing.T) {
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// success, failure, success, … : 10 failures in 20 requests.
				acts := make([]int, 0, 21)
				for i := range 20 {
					acts = append(acts, []int{200, 500}[i%2])
				}
				s := &script{acts: append(acts, 200)}
				l := w.link(t, s, Options{Policy: Policy{IntervalBreakerConfig: client.IntervalBreakerConfig{BreakerConsecutiveFailures: 100}}})
				for i := range 20 {
					get(t, context.Background(), l)
					want := client.StateClosed
					if i == 19 {
						want = client.StateOpen
					}
					if l.BreakerState() != want {
						t.Fatalf("after %d requests: %s, want %s", i+1, l.BreakerState(), want)
					}
				}
			})
		})
	}
}

func TestBreakerRatioCountsPerInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{acts: []int{500, 500, 500}}
		l := inprocLink(t, s, Options{Policy: Policy{IntervalBreakerConfig: client.IntervalBreakerConfig{BreakerConsecutiveFailures: 100, BreakerMinRequests: 4, BreakerInterval: time.Second}}})
		for range 3 {
			get(t, context.Background(), l)
		}
		time.Sleep(time.Second + time.Millisecond) // a new interval: counts start over
		s.mu.Lock()
		s.acts = []int{500}
		s.calls = 0
		s.mu.Unlock()
		for i := range 4 {
			get(t, context.Background(), l)
			if want := map[bool]string{true: client.StateOpen, false: client.StateClosed}[i == 3]; l.BreakerState() != want {
				t.Fatalf("after %d failures in the new interval: %s", i+1, l.BreakerState())
			}
		}
	})
}

func TestBreakerIgnoresCancelledCalls(t *testing.T) {
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &script{acts: []int{actHang}}
				l := w.link(t, s, Options{})
				for range 6 {
					ctx, cancel := context.WithCancel(context.Background())
					go func() {
						synctest.Wait() // the call is in flight, the handler blocked
						cancel()
					}()
					_, he := get(t, ctx, l)
					if he == nil || he.Status != http.StatusServiceUnavailable || he.Message != "request canceled" {
						t.Fatalf("cancelled call: %+v", he)
					}
				}
				if l.BreakerState() != client.StateClosed {
					t.Fatalf("state %s after cancelled calls", l.BreakerState())
				}
				if got := metric(l, `ron_io_timeouts_total{role="gateway",op="forward"}`); got != 0 {
					t.Fatalf("timeouts %v", got)
				}
			})
		})
	}
}

func TestBreakerStopsRetries(t *testing.T) {
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &script{acts: []int{503}}
				l := w.link(t, s, Options{Policy: Policy{IntervalBreakerConfig: client.IntervalBreakerConfig{BreakerConsecutiveFailures: 2}}})
				_, he := get(t, context.Background(), l)
				checkBreakerError(t, he, 5)
				if s.count() != 2 {
					t.Fatalf("upstream called %d times", s.count())
				}
			})
		})
	}
}

func TestSetPolicyKeepsOrReplacesBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{acts: []int{500}}
		l := inprocLink(t, s, Options{})
		for range 5 {
			get(t, context.Background(), l)
		}
		p := l.Policy()
		p.ForwardTimeout = 2 * time.Second
		p.MaxAttempts = 2
		l.SetPolicy(p)
		if l.BreakerState() != client.StateOpen || l.Policy().ForwardTimeout != 2*time.Second {
			t.Fatalf("unrelated change: state %s, policy %+v", l.BreakerState(), l.Policy())
		}
		p.BreakerConsecutiveFailures = 7
		l.SetPolicy(p)
		if l.BreakerState() != client.StateClosed || breakerGauge(l, client.StateClosed) != 1 {
			t.Fatalf("breaker change: state %s", l.BreakerState())
		}
		for i := range 7 {
			get(t, context.Background(), l)
			if (l.BreakerState() == client.StateOpen) != (i == 6) {
				t.Fatalf("after %d failures: %s", i+1, l.BreakerState())
			}
		}
		l.SetPolicy(Policy{})
		if l.Policy() != DefaultPolicy() {
			t.Fatalf("zero policy → %+v, want defaults", l.Policy())
		}
	})
}
