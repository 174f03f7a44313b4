package client

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/httpx"
)

func wantState(t *testing.T, c *Client, set *metrics.Set, want string) {
	t.Helper()
	if got := c.BreakerState(); got != want {
		t.Fatalf("breaker state %s, want %s", got, want)
	}
	for _, s := range BreakerStates {
		v := 0.0
		if s == want {
			v = 1
		}
		name := `ron_breaker_state{role="gateway",target="target.test:5303",state="` + s + `"}`
		if got := metricValue(t, set, name); got != v {
			t.Fatalf("%s = %v, want %v", name, got, v)
		}
	}
}

func TestBreakerOpensAndCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, rt, set := newFake(status(http.StatusServiceUnavailable), Options{Retries: -1})
		wantState(t, c, set, StateClosed)
		for range 5 {
			c.Do(t.Context(), &Request{Path: "/x"})
		}
		wantState(t, c, set, StateOpen)

		_, err := c.Do(t.Context(), &Request{Path: "/x"})
		he := httpx.AsError(err)
		if !errors.Is(err, ErrBreakerOpen) || he.Status != 503 || he.Code != httpx.CodeUpstreamUnavailable || he.RetryAfter != 5 {
			t.Fatalf("open breaker: %v %+v", err, he)
		}
		if rt.count() != 5 {
			t.Fatalf("open breaker let a call through (%d calls)", rt.count())
		}

		advance(5*time.Second + time.Millisecond)
		wantState(t, c, set, StateHalfOpen)
		rt.set(status(http.StatusOK))
		resp, err := c.Do(t.Context(), &Request{Path: "/x"})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		wantState(t, c, set, StateClosed)
	})
}

func TestBreakerHalfOpenFailureReopens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, rt, set := newFake(status(http.StatusBadGateway), Options{Retries: -1})
		for range 5 {
			c.Do(t.Context(), &Request{Path: "/x"})
		}
		advance(6 * time.Second)
		c.Do(t.Context(), &Request{Path: "/x"}) // the probe fails
		wantState(t, c, set, StateOpen)
		if rt.count() != 6 {
			t.Fatalf("calls = %d, want 5 + 1 probe", rt.count())
		}
	})
}

// Retries count attempts: one call retried on 503 feeds the breaker several
// failures, and an open breaker stops the retry loop.
func TestBreakerStopsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, rt, _ := newFake(status(http.StatusServiceUnavailable), Options{Retries: 10})
		_, err := c.Do(t.Context(), &Request{Path: "/x"})
		if !errors.Is(err, ErrBreakerOpen) || rt.count() != 5 {
			t.Fatalf("err %v after %d calls", err, rt.count())
		}
	})
}

func TestBreakerIgnoresCancelledHedgesAndClientErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, rt, set := newFake(hang, Options{})
		for range 10 {
			ctx, cancel := context.WithCancel(t.Context())
			errc := make(chan error, 1)
			go func() {
				_, err := c.Do(ctx, &Request{Path: "/x"})
				errc <- err
			}()
			synctest.Wait() // the attempt is in flight
			cancel()        // the hedge lost
			if err := <-errc; !errors.Is(err, context.Canceled) || IsTimeout(err) {
				t.Fatalf("cancelled call: %v", err)
			}
		}
		wantState(t, c, set, StateClosed)

		rt.set(status(http.StatusNotFound))
		for range 10 {
			_, err := c.Do(t.Context(), &Request{Path: "/x"})
			if httpx.AsError(err).Code != httpx.CodeNotFound {
				t.Fatalf("err = %v", err)
			}
		}
		wantState(t, c, set, StateClosed)

		rt.set(status(http.StatusInternalServerError))
		for range 5 {
			c.Do(t.Context(), &Request{Path: "/x"})
		}
		wantState(t, c, set, StateOpen)
	})
}

func TestBreakerFailureRatio(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, rt, set := newFake(nil, Options{Retries: -1})
		rt.set(func(n int, r *http.Request) (*http.Response, error) {
			if n%2 == 0 {
				return reply(r, http.StatusServiceUnavailable), nil
			}
			return reply(r, http.StatusOK), nil
		})
		for range 4 {
			if resp, err := c.Do(t.Context(), &Request{Path: "/x"}); err == nil {
				resp.Body.Close()
			}
		}
		wantState(t, c, set, StateClosed) // 2 of 4: below MinRequests
		c.Do(t.Context(), &Request{Path: "/x"})
		wantState(t, c, set, StateOpen) // 3 of 5 failed
	})
}
