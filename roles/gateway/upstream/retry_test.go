package upstream

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

	"github.com/ronhq/ron/httpx"
)

// Script actions beyond plain statuses.
const (
	actPanic = -1 // abort before the headers (connection dropped / RoundTrip error)
	actHang  = -2 // block until the request's context ends
)

// script answers the i-th request with acts[i] (the last one repeating).
type script struct {
	mu     sync.Mutex
	acts   []int
	header http.Header
	calls  int
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	act := s.acts[min(s.calls, len(s.acts)-1)]
	s.calls++
	s.mu.Unlock()
	switch act {
	case actPanic:
		panic(http.ErrAbortHandler)
	case actHang:
		<-r.Context().Done()
		return
	}
	for k, v := range s.header {
		w.Header()[k] = v
	}
	w.WriteHeader(act)
	_, _ = io.WriteString(w, http.StatusText(act))
}

func (s *script) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func TestRetries(t *testing.T) {
	cases := []struct {
		name     string
		acts     []int
		header   http.Header
		method   string
		body     string
		deadline time.Duration // 0: default
		policy   Policy
		status   int    // returned response status, 0 when an error is expected
		errCode  string // expected *httpx.Error code
		attempts int
		elapsed  time.Duration
		timeouts float64
	}{
		{name: "503 twice then 200", acts: []int{503, 503, 200}, method: "GET", status: 200, attempts: 3, elapsed: 150 * time.Millisecond},
		{name: "HEAD retried", acts: []int{502, 200}, method: "HEAD", status: 200, attempts: 2, elapsed: 50 * time.Millisecond},
		{name: "attempts spent returns last 504", acts: []int{504}, method: "GET", status: 504, attempts: 3, elapsed: 150 * time.Millisecond},
		{name: "Retry-After replaces a shorter pause", acts: []int{503, 200}, header: http.Header{"Retry-After": {"1"}},
			method: "GET", status: 200, attempts: 2, elapsed: time.Second},
		{name: "Retry-After past the deadline", acts: []int{503, 200}, header: http.Header{"Retry-After": {"10"}},
			method: "GET", status: 503, attempts: 1},
		{name: "pause does not fit the deadline", acts: []int{503, 200}, deadline: 40 * time.Millisecond,
			method: "GET", status: 503, attempts: 1},
		{name: "pause capped", acts: []int{503, 503, 200}, policy: Policy{RetryCap: 60 * time.Millisecond},
			method: "GET", status: 200, attempts: 3, elapsed: 110 * time.Millisecond},
		{name: "MaxAttempts 1", acts: []int{503, 200}, policy: Policy{MaxAttempts: 1}, method: "GET", status: 503, attempts: 1},
		{name: "500 not retried", acts: []int{500, 200}, method: "GET", status: 500, attempts: 1},
		{name: "404 not retried", acts: []int{404, 200}, method: "GET", status: 404, attempts: 1},
		{name: "POST not retried", acts: []int{503, 200}, method: "POST", body: "x", status: 503, attempts: 1},
		{name: "PUT not retried", acts: []int{502, 200}, method: "PUT", body: "x", status: 502, attempts: 1},
		{name: "DELETE not retried", acts: []int{503, 200}, method: "DELETE", status: 503, attempts: 1},
		{name: "GET with a body not retried", acts: []int{503, 200}, method: "GET", body: "x", status: 503, attempts: 1},
		{name: "broken connection retried then 502", acts: []int{actPanic}, method: "GET", errCode: httpx.CodeUpstreamUnavailable,
			attempts: 3, elapsed: 150 * time.Millisecond},
		{name: "broken connection then 200", acts: []int{actPanic, 200}, method: "GET", status: 200, attempts: 2, elapsed: 50 * time.Millisecond},
		{name: "write with broken connection not retried", acts: []int{actPanic, 200}, method: "POST", body: "x",
			errCode: httpx.CodeUpstreamUnavailable, attempts: 1},
		{name: "attempt timeout retried", acts: []int{actHang, 200}, method: "GET", deadline: 20 * time.Second,
			policy: Policy{ForwardTimeout: time.Second}, status: 200, attempts: 2, elapsed: time.Second + 50*time.Millisecond, timeouts: 1},
	}
	for _, w := range wirings {
		for _, tc := range cases {
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					s := &script{acts: tc.acts, header: tc.header}
					l := w.link(t, s, Options{Policy: tc.policy})
					c := Call{Method: tc.method, Path: "/o/x", ContentLength: -1}
					if tc.body != "" {
						c.Body, c.ContentLength = strings.NewReader(tc.body), int64(len(tc.body))
					}
					if tc.deadline > 0 {
						c.Deadline = time.Now().Add(tc.deadline)
					}
					var attempts int
					c.Attempts = &attempts
					start := time.Now()
					resp, err := l.Do(context.Background(), c)
					elapsed := time.Since(start)
					checkResult(t, resp, err, tc.status, tc.errCode)
					if attempts != tc.attempts || s.count() != tc.attempts || elapsed != tc.elapsed {
						t.Fatalf("attempts %d (handler %d), elapsed %v; want %d, %v", attempts, s.count(), elapsed, tc.attempts, tc.elapsed)
					}
					if got := metric(l, `ron_backoff_retries_total{role="gateway",op="forward"}`); got != float64(tc.attempts-1) {
						t.Fatalf("retries metric %v", got)
					}
					if got := metric(l, `ron_io_timeouts_total{role="gateway",op="forward"}`); got != tc.timeouts {
						t.Fatalf("timeouts metric %v, want %v", got, tc.timeouts)
					}
				})
			})
		}
	}
}

// checkResult checks a response status or an *httpx.Error code, and closes
// the body.
func checkResult(t *testing.T, resp *http.Response, err error, status int, code string) {
	t.Helper()
	if code != "" {
		var he *httpx.Error
		if resp != nil || !errors.As(err, &he) || he.Code != code {
			t.Fatalf("resp %v, err %v; want error %s", resp, err, code)
		}
		return
	}
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d", resp.StatusCode, status)
	}
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Fatalf("body: %v", err)
	}
}

func TestBackoffFormula(t *testing.T) {
	l := &Link{}
	pol := DefaultPolicy()
	cases := []struct {
		rnd  float64
		n    int
		want time.Duration
	}{
		{0, 1, 50 * time.Millisecond}, {0.999, 1, 99950 * time.Microsecond},
		{0, 2, 100 * time.Millisecond}, {0.5, 2, 150 * time.Millisecond},
		{0, 3, 200 * time.Millisecond}, {0, 6, 1600 * time.Millisecond},
		{0, 7, 2 * time.Second}, {0.9, 40, 2 * time.Second},
	}
	for _, tc := range cases {
		l.rnd = func() float64 { return tc.rnd }
		if got := l.backoff(tc.n, pol); got != tc.want {
			t.Errorf("backoff(n=%d, rnd=%v) = %v, want %v", tc.n, tc.rnd, got, tc.want)
		}
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		v    string
		want time.Duration
	}{
		{"", 0}, {"2", 2 * time.Second}, {" 3 ", 3 * time.Second}, {"-1", 0}, {"abc", 0}, {"1.5", 0},
		{now.Add(4 * time.Second).Format(http.TimeFormat), 4 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
	}
	for _, tc := range cases {
		resp := &http.Response{Header: http.Header{"Retry-After": {tc.v}}}
		if got := retryAfter(resp, now); got != tc.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tc.v, got, tc.want)
		}
	}
	if retryAfter(nil, now) != 0 {
		t.Error("nil response")
	}
}
