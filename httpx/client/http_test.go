package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/ronhq/ron/httpx"
)

// newServer returns a real client for h; both are released at cleanup.
func newServer(t *testing.T, h http.HandlerFunc, opt Options) (*Client, *metrics.Set) {
	t.Helper()
	srv := httptest.NewServer(h)
	set := metrics.NewSet()
	opt.BaseURL, opt.Metrics, opt.Role = srv.URL, set, "test"
	if opt.BackoffBase == 0 {
		opt.BackoffBase = time.Millisecond
	}
	c := New(opt)
	t.Cleanup(func() { c.Close(); srv.Close() })
	return c, set
}

// failFirst answers 503 (no envelope, no Retry-After) to the first n requests
// of each method, then 200 with the request body echoed.
func failFirst(n int32, hits map[string]*atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if hits[r.Method].Add(1) <= n {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write(body)
	}
}

func TestRetries503ForGETNotPOST(t *testing.T) {
	hits := map[string]*atomic.Int32{"GET": {}, "POST": {}}
	lenient := BreakerOptions{MinRequests: 100, ConsecutiveFailures: 100}
	c, set := newServer(t, failFirst(2, hits), Options{Breaker: lenient})
	resp, err := c.Do(t.Context(), &Request{Path: "/inventory"})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if hits["GET"].Load() != 3 || metricValue(t, set, `ron_backoff_retries_total{role="test",op="GET"}`) != 2 {
		t.Fatalf("GET hits = %d", hits["GET"].Load())
	}
	_, err = c.Do(t.Context(), &Request{Method: http.MethodPost, Path: "/o", Body: strings.NewReader("x")})
	if he := httpx.AsError(err); he.Status != http.StatusServiceUnavailable || hits["POST"].Load() != 1 {
		t.Fatalf("POST: %v after %d hits", err, hits["POST"].Load())
	}
	hits["POST"].Store(0)
	_, err = c.Do(t.Context(), &Request{Method: http.MethodPost, Path: "/inventory/has", Body: strings.NewReader("[]"), Retry: RetryIdempotent})
	if err != nil || hits["POST"].Load() != 3 {
		t.Fatalf("POST marked idempotent: %v after %d hits", err, hits["POST"].Load())
	}
}

func TestRetryResendsBody(t *testing.T) {
	hits := map[string]*atomic.Int32{"PUT": {}}
	c, _ := newServer(t, failFirst(1, hits), Options{})
	resp, err := c.Do(t.Context(), &Request{Method: http.MethodPut, Path: "/o/x", Body: bytes.NewReader([]byte("payload"))})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "payload" || hits["PUT"].Load() != 2 {
		t.Fatalf("echo %q after %d hits", got, hits["PUT"].Load())
	}

	hits["PUT"].Store(0)
	stream := io.MultiReader(strings.NewReader("pay"), strings.NewReader("load"))
	_, err = c.Do(t.Context(), &Request{Method: http.MethodPut, Path: "/o/x", Body: stream})
	if err == nil || hits["PUT"].Load() != 1 {
		t.Fatalf("stream body retried: %v after %d hits", err, hits["PUT"].Load())
	}

	hits["PUT"].Store(0)
	getBody := func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("payload")), nil }
	body, _ := getBody()
	resp, err = c.Do(t.Context(), &Request{Method: http.MethodPut, Path: "/o/x", Body: body, GetBody: getBody, ContentLength: 7})
	if err != nil || hits["PUT"].Load() != 2 {
		t.Fatalf("GetBody body: %v after %d hits", err, hits["PUT"].Load())
	}
	resp.Body.Close()
}

func TestEnvelopeDecoding(t *testing.T) {
	c, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/o/mismatch":
			httpx.WriteError(w, "corr-7", httpx.NewError(http.StatusConflict, httpx.CodeHashMismatch, "digest differs").
				WithDetails(map[string]any{"expected": "b3:aa"}))
		case "/plain":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "/busy":
			httpx.WriteError(w, "", httpx.NewError(http.StatusTooManyRequests, httpx.CodeBusy, "full").WithRetryAfter(9))
		}
	}, Options{})
	_, err := c.Do(t.Context(), &Request{Method: http.MethodPut, Path: "/o/mismatch"})
	var he *httpx.Error
	if !errors.As(err, &he) || he.Status != 409 || he.Code != httpx.CodeHashMismatch || he.CorrID != "corr-7" || he.Details["expected"] != "b3:aa" {
		t.Fatalf("err = %#v", err)
	}
	_, err = c.Do(t.Context(), &Request{Path: "/plain"})
	if !errors.As(err, &he) || he.Status != 500 || he.Code != httpx.CodeInternal {
		t.Fatalf("plain 500: %#v", err)
	}
	_, err = c.Do(t.Context(), &Request{Path: "/busy"})
	if !errors.As(err, &he) || he.Code != httpx.CodeBusy || he.RetryAfter != 9 {
		t.Fatalf("429 beyond cap: %#v", err)
	}
}

func TestAcceptStatus(t *testing.T) {
	c, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") != "" {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		http.NotFound(w, r)
	}, Options{})
	resp, err := c.Do(t.Context(), &Request{Path: "/o/x", Header: http.Header{"If-None-Match": {`"b3:x"`}}, AcceptStatus: []int{304}})
	if err != nil || resp.StatusCode != 304 {
		t.Fatalf("304: %v", err)
	}
	resp.Body.Close()
	resp, err = c.Do(t.Context(), &Request{Path: "/o/x", AcceptStatus: []int{404}})
	if err != nil || resp.StatusCode != 404 {
		t.Fatalf("accepted 404: %v", err)
	}
	resp.Body.Close()
	if _, err := c.Do(t.Context(), &Request{Path: "/o/x"}); httpx.AsError(err).Code != httpx.CodeNotFound {
		t.Fatalf("404: %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	set := metrics.NewSet()
	c := New(Options{BaseURL: url, BackoffBase: time.Millisecond, Metrics: set, Role: "cli"})
	defer c.Close()
	_, err := c.Do(t.Context(), &Request{Path: "/readyz"})
	he := httpx.AsError(err)
	if !IsUnreachable(err) || !errors.Is(err, syscall.ECONNREFUSED) || he.Status != http.StatusBadGateway || he.Code != httpx.CodeUpstreamUnavailable {
		t.Fatalf("err = %v (%+v)", err, he)
	}
	if strings.Contains(err.Error(), "/readyz") {
		t.Fatalf("error leaks the path: %v", err)
	}
	if metricValue(t, set, `ron_backoff_retries_total{role="cli",op="GET"}`) != 3 {
		t.Fatal("connection errors were not retried 3 times")
	}
	if IsUnreachable(httpx.NewError(502, httpx.CodeUpstreamUnavailable, "x")) {
		t.Fatal("a 502 response is not unreachability")
	}
}

func TestJSON(t *testing.T) {
	type item struct {
		ID   string `json:"id"`
		Size int    `json:"size"`
	}
	c, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-1" || r.URL.Query().Get("after") != "b3:a b" {
			httpx.WriteError(w, "", httpx.NewError(401, httpx.CodeUnauthorized, "no"))
			return
		}
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		var in []string
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || r.Header.Get("Content-Type") != "application/json" {
			httpx.WriteError(w, "", httpx.NewError(400, httpx.CodeBadRequest, "bad"))
			return
		}
		json.NewEncoder(w).Encode([]item{{ID: in[0], Size: 3}})
	}, Options{Token: func(context.Context) (string, error) { return "tok-1", nil }})
	var out []item
	if err := c.JSON(t.Context(), http.MethodPost, "/inventory/has?after=b3:a+b", []string{"b3:1"}, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0] != (item{"b3:1", 3}) {
		t.Fatalf("out = %+v", out)
	}
	if err := c.JSON(t.Context(), http.MethodDelete, "/o/x?after=b3:a+b", nil, &out); err != nil {
		t.Fatal(err)
	}
	if err := c.JSON(t.Context(), http.MethodGet, "/inventory", nil, &out); httpx.AsError(err).Code != httpx.CodeUnauthorized {
		t.Fatalf("err = %v", err)
	}
}

func TestTokenAndBaseURLErrors(t *testing.T) {
	bad := New(Options{BaseURL: "localhost:5303"})
	if _, err := bad.Do(t.Context(), &Request{Path: "/"}); err == nil {
		t.Fatal("scheme-less base URL accepted")
	}
	tokErr := errors.New("no key")
	c := New(Options{BaseURL: "http://127.0.0.1:1", Token: func(context.Context) (string, error) { return "", tokErr }})
	if _, err := c.Do(t.Context(), &Request{Path: "/"}); !errors.Is(err, tokErr) {
		t.Fatalf("err = %v", err)
	}
}
