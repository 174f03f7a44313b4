package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
)

func TestRetryAfterHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, rt, set := newFake(func(n int, r *http.Request) (*http.Response, error) {
			if n == 0 {
				return reply(r, http.StatusTooManyRequests, "Retry-After", "1"), nil
			}
			return reply(r, http.StatusOK), nil
		}, Options{})
		start := time.Now()
		resp, err := c.Do(t.Context(), &Request{Path: "/o/x", Op: "GET /o/{b3}"})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := time.Since(start); got != time.Second {
			t.Fatalf("waited %v, want the 1 s Retry-After", got)
		}
		if rt.count() != 2 || metricValue(t, set, `ron_backoff_retries_total{role="gateway",op="GET /o/{b3}"}`) != 1 {
			t.Fatalf("calls %d", rt.count())
		}
	})
}

func TestRetryAfterBeyondCapStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, rt, _ := newFake(status(http.StatusServiceUnavailable, "Retry-After", "5"), Options{})
		start := time.Now()
		_, err := c.Do(t.Context(), &Request{Path: "/x"})
		var he *httpx.Error
		if !errors.As(err, &he) || he.Status != 503 || he.RetryAfter != 5 {
			t.Fatalf("err = %#v", err)
		}
		if rt.count() != 1 || time.Since(start) != 0 {
			t.Fatalf("calls %d after %v, want 1 immediately", rt.count(), time.Since(start))
		}
	})
}

func TestRetryAfterHTTPDate(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := map[string]int{"0": 0, "7": 7, " 3 ": 3, now.Add(1500 * time.Millisecond).Format(http.TimeFormat): 1,
		now.Add(-time.Hour).Format(http.TimeFormat): 0}
	for v, want := range cases {
		if got, ok := parseRetryAfter(v, now); !ok || got != want {
			t.Errorf("%q: %d %v, want %d", v, got, ok, want)
		}
	}
	for _, v := range []string{"", "-1", "soon"} {
		if _, ok := parseRetryAfter(v, now); ok {
			t.Errorf("%q parsed", v)
		}
	}
}

func TestBackoffJitterDoublingCap(t *testing.T) {
	c := New(Options{BaseURL: "http://x"})
	for range 200 {
		for n, lim := range [][2]time.Duration{{50, 100}, {100, 200}, {200, 400}, {400, 800}} {
			d := c.backoff(n)
			if d < lim[0]*time.Millisecond || d >= lim[1]*time.Millisecond {
				t.Fatalf("backoff(%d) = %v", n, d)
			}
		}
		if d := c.backoff(6); d != 2*time.Second {
			t.Fatalf("backoff(6) = %v, want the 2 s cap", d)
		}
	}
}

func TestDeadlineRespected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, rt, _ := newFake(status(http.StatusServiceUnavailable), Options{Retries: 10})
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.Do(ctx, &Request{Path: "/x"})
		if httpx.AsError(err).Status != http.StatusServiceUnavailable {
			t.Fatalf("err = %v", err)
		}
		if got := time.Since(start); got >= 300*time.Millisecond {
			t.Fatalf("took %v, past the 300 ms deadline", got)
		}
		if rt.count() < 2 || rt.count() > 3 {
			t.Fatalf("calls = %d, want 2–3 within 300 ms", rt.count())
		}
	})
}

func TestAttemptTimeoutRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, rt, set := newFake(hang, Options{Timeout: time.Second, Retries: 2})
		start := time.Now()
		_, err := c.Do(t.Context(), &Request{Path: "/x"})
		he := httpx.AsError(err)
		if !IsTimeout(err) || he.Status != http.StatusGatewayTimeout || IsUnreachable(err) {
			t.Fatalf("err = %v (%+v)", err, he)
		}
		if got := time.Since(start); got < 3*time.Second+150*time.Millisecond || got >= 3*time.Second+300*time.Millisecond {
			t.Fatalf("took %v, want 3 attempts of 1 s plus two backoffs", got)
		}
		if rt.count() != 3 || metricValue(t, set, `ron_io_timeouts_total{role="gateway",op="GET"}`) != 3 {
			t.Fatalf("calls = %d", rt.count())
		}
	})
}

func TestCallerDeadlineShorterThanTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, rt, _ := newFake(hang, Options{})
		ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.Do(ctx, &Request{Path: "/x"})
		if !IsTimeout(err) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		if time.Since(start) != 1500*time.Millisecond || rt.count() != 1 {
			t.Fatalf("took %v with %d calls", time.Since(start), rt.count())
		}
	})
}

// The attempt timeout covers the wait for headers only: a streamed body may
// take longer, and closing it releases the attempt's context.
func TestStreamOutlivesAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reqCtx context.Context
		c, _, _ := newFake(func(_ int, r *http.Request) (*http.Response, error) {
			reqCtx = r.Context()
			resp := reply(r, http.StatusOK)
			resp.Body = io.NopCloser(&ctxReader{ctx: r.Context(), r: strings.NewReader("tile bytes")})
			return resp, nil
		}, Options{Timeout: time.Second})
		resp, err := c.Do(t.Context(), &Request{Path: "/x"})
		if err != nil {
			t.Fatal(err)
		}
		advance(3 * time.Second)
		b, err := io.ReadAll(resp.Body)
		if err != nil || string(b) != "tile bytes" {
			t.Fatalf("body %q, %v", b, err)
		}
		if reqCtx.Err() != nil {
			t.Fatal("attempt context ended before Close")
		}
		resp.Body.Close()
		if reqCtx.Err() == nil {
			t.Fatal("Close did not release the attempt context")
		}
	})
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
