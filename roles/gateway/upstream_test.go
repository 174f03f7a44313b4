package gateway

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ronhq/ron/store"
)

// failFirst answers 503 to the first n requests, then 200 "ok".
func failFirst(n int32) func(http.ResponseWriter, *http.Request, []byte) {
	var calls atomic.Int32
	return func(w http.ResponseWriter, r *http.Request, b []byte) {
		if calls.Add(1) <= n {
			status(http.StatusServiceUnavailable, "busy")(w, r, b)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}
}

// TestReadRetriedWriteNot (docs/gateway.md §3.8): a GET answered 503 is retried until it
// succeeds within retry_max_attempts; a POST is sent once and its 503
// passes through.
func TestReadRetriedWriteNot(t *testing.T) {
	s := newStub(failFirst(2))
	cfg := baseConfig()
	cfg.StorageURL = s.listen(t)
	h := startGateway(t, cfg, Locals{})
	a := h.do("GET", "/o/"+store.Sum([]byte("x")).String(), nil)
	if a.status != http.StatusOK || string(a.body) != "ok" {
		t.Fatalf("GET after two 503s: %s, want 200 ok", a)
	}
	if n := s.count(); n != 3 {
		t.Errorf("storage saw %d attempts, want 3", n)
	}
	if got := h.metric("backoff_retries_total", "op", "forward"); got != 2 {
		t.Errorf(`ron_backoff_retries_total{op="forward"} = %v, want 2`, got)
	}

	w := newStub(failFirst(1 << 30))
	cfg = baseConfig()
	cfg.StorageURL = w.listen(t)
	h = startGateway(t, cfg, Locals{})
	a = h.do("POST", "/o", []byte("data"), "Authorization", h.bearer("", "storage:write"))
	want(t, "POST answered 503", a, http.StatusServiceUnavailable, "busy")
	if n := w.count(); n != 1 {
		t.Errorf("storage saw %d POST attempts, want 1 (writes are never retried)", n)
	}
	a = h.do("GET", "/o/"+store.Sum([]byte("x")).String(), nil)
	want(t, "GET answered 503 three times", a, http.StatusServiceUnavailable, "busy")
	if n := w.count(); n != 1+cfg.RetryMaxAttempts {
		t.Errorf("storage saw %d GET attempts, want %d", n-1, cfg.RetryMaxAttempts)
	}
}

// TestUpstreamDown: an upstream on a closed port is 502
// upstream_unavailable after the read's attempts (docs/gateway.md §3.8).
func TestUpstreamDown(t *testing.T) {
	cfg := baseConfig()
	cfg.StorageURL = closedURL(t)
	h := startGateway(t, cfg, Locals{})
	want(t, "GET with storage down", h.do("GET", "/o/"+store.Sum([]byte("x")).String(), nil),
		http.StatusBadGateway, "upstream_unavailable")
	want(t, "POST with storage down", h.do("POST", "/o", []byte("x"), "Authorization", h.bearer("", "storage:write")),
		http.StatusBadGateway, "upstream_unavailable")
	if got := h.metric("gateway_upstream_requests_total", "upstream", "storage", "code", "error"); got != float64(cfg.RetryMaxAttempts+1) {
		t.Errorf(`ron_gateway_upstream_requests_total{code="error"} = %v, want %d`, got, cfg.RetryMaxAttempts+1)
	}
}

// TestBreakerOpens: after breaker_consecutive_failures failed answers the
// storage breaker opens: 503 upstream_unavailable with Retry-After, and the
// upstream is not called (docs/gateway.md §3.8).
func TestBreakerOpens(t *testing.T) {
	s := newStub(status(http.StatusInternalServerError, "internal"))
	cfg := baseConfig()
	cfg.StorageURL = s.listen(t)
	h := startGateway(t, cfg, Locals{})
	path := "/o/" + store.Sum([]byte("x")).String()
	for i := range int(cfg.BreakerConsecutiveFailures) {
		want(t, "GET answered 500", h.do("GET", path, nil), http.StatusInternalServerError, "internal")
		if n := s.count(); n != i+1 {
			t.Fatalf("storage saw %d requests after %d GETs (a 500 is not retried)", n, i+1)
		}
	}
	for range 3 {
		a := h.do("GET", path, nil)
		wantLimit(t, "GET with the breaker open", a, http.StatusServiceUnavailable, "upstream_unavailable",
			"reason", "breaker_open", 0)
	}
	if n := s.count(); n != int(cfg.BreakerConsecutiveFailures) {
		t.Errorf("storage saw %d requests, want %d: an open breaker sends nothing", n, cfg.BreakerConsecutiveFailures)
	}
	if got := h.r.Details().(map[string]any)["breakers"].(map[string]string)["storage"]; got != "open" {
		t.Errorf("status details: storage breaker %q, want open", got)
	}
}

// TestRequestTimeoutShorterThanUpstream: a Request-Timeout shorter than the
// upstream's answer is 504 timeout, well before forward_timeout (docs/gateway.md §3.8).
func TestRequestTimeoutShorterThanUpstream(t *testing.T) {
	s := newStub(blocking(nil))
	cfg := baseConfig()
	cfg.StorageURL = s.listen(t)
	h := startGateway(t, cfg, Locals{})
	start := time.Now()
	a := h.do("GET", "/o/"+store.Sum([]byte("x")).String(), nil, "Request-Timeout", "0.2")
	took := time.Since(start)
	want(t, "GET with Request-Timeout 0.2 to a stuck upstream", a, http.StatusGatewayTimeout, "timeout")
	if took >= cfg.ForwardTimeout {
		t.Errorf("answer took %s, want well under forward_timeout %s", took, cfg.ForwardTimeout)
	}
	if n := s.count(); n != 1 {
		t.Errorf("storage saw %d attempts, want 1 (no retry past the deadline)", n)
	}
	if got := h.metric("io_timeouts_total", "op", "forward"); got < 1 {
		t.Errorf(`ron_io_timeouts_total{op="forward"} = %v, want ≥ 1`, got)
	}
}
