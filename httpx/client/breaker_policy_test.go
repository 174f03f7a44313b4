package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// strictHalf is a rule in the style of docs/index.md §6: ≥ 4 requests and more than half failed.
func strictHalf(n Counts) bool { return n.Requests >= 4 && n.TotalFailures*2 > n.Requests }

func TestBreakerCustomTripAndStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var moves []string
		c, rt, set := newFake(nil, Options{Retries: -1, Breaker: BreakerOptions{
			Trip:          strictHalf,
			FailureStatus: func(s int) bool { return s >= 400 && s != http.StatusNotFound },
			OnStateChange: func(target, from, to string) {
				mu.Lock()
				moves = append(moves, target+":"+from+">"+to)
				mu.Unlock()
			},
		}})
		rt.set(func(n int, r *http.Request) (*http.Response, error) {
			if n%2 == 0 {
				return reply(r, http.StatusTooManyRequests), nil
			}
			return reply(r, http.StatusNotFound), nil
		})
		for range 4 {
			c.Do(t.Context(), &Request{Path: "/x"})
		}
		wantState(t, c, set, StateClosed) // 2 of 4 failed: not more than half
		c.Do(t.Context(), &Request{Path: "/x"})
		wantState(t, c, set, StateOpen) // 3 of 5
		if got := metricValue(t, set, `ron_breaker_open_total{role="gateway",target="target.test:5303"}`); got != 1 {
			t.Fatalf("ron_breaker_open_total = %v", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(moves) != 1 || moves[0] != "target.test:5303:closed>open" {
			t.Fatalf("state changes %q", moves)
		}
	})
}

func TestBreakerBucketPeriodRollsFailuresOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _, set := newFake(status(http.StatusServiceUnavailable), Options{Retries: -1, Breaker: BreakerOptions{
			Window: 30 * time.Second, BucketPeriod: 3 * time.Second, Trip: strictHalf}})
		for range 3 {
			c.Do(t.Context(), &Request{Path: "/x"})
		}
		advance(31 * time.Second) // the three failures leave the window
		for range 3 {
			c.Do(t.Context(), &Request{Path: "/x"})
		}
		wantState(t, c, set, StateClosed) // 3 requests in the window: below 4
		c.Do(t.Context(), &Request{Path: "/x"})
		wantState(t, c, set, StateOpen)
	})
}

// answer is a body Validate may reject.
func answer(body string) func(int, *http.Request) (*http.Response, error) {
	return func(_ int, r *http.Request) (*http.Response, error) {
		resp := reply(r, http.StatusOK)
		resp.Body = io.NopCloser(strings.NewReader(body))
		return resp, nil
	}
}

var errBadBody = errors.New("bad body")

func validateOK(resp *http.Response) error {
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if string(b) != "ok" {
		return errBadBody
	}
	return nil
}

func TestValidateFailureCountsForBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, rt, set := newFake(answer("ok"), Options{Retries: 5, Breaker: BreakerOptions{Trip: strictHalf}})
		resp, err := c.Do(t.Context(), &Request{Path: "/x", Validate: validateOK})
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("valid answer: %v", err)
		}
		rt.set(answer("garbage"))
		for range 3 {
			if _, err := c.Do(t.Context(), &Request{Path: "/x", Validate: validateOK}); !errors.Is(err, errBadBody) {
				t.Fatalf("invalid answer: %v", err)
			}
		}
		if rt.count() != 4 {
			t.Fatalf("%d calls: an invalid answer was retried", rt.count())
		}
		wantState(t, c, set, StateOpen) // 3 of 4 failed
	})
}

func TestValidateCancelledIsExcluded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _, set := newFake(answer("ok"), Options{Retries: -1, Breaker: BreakerOptions{Trip: strictHalf}})
		for range 10 {
			ctx, cancel := context.WithCancel(t.Context())
			_, err := c.Do(ctx, &Request{Path: "/x", Validate: func(*http.Response) error {
				cancel() // the hedge lost while the body was being read
				return ctx.Err()
			}})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v", err)
			}
		}
		wantState(t, c, set, StateClosed)
	})
}
