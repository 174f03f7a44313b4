package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
)

// testWait bounds every wait of these tests for an asynchronous outcome (an
// answer, a registry update, a queue filling up); it is never slept.
const testWait = 10 * time.Second

// baseConfig is the gateway config of most tests: an ephemeral listener,
// anonymous clients not rate limited, retry pauses of a millisecond.
func baseConfig() Config {
	c := DefaultConfig()
	c.Listen = "127.0.0.1:0"
	c.AnonRPS, c.AnonBurst = 1e6, 0
	c.RetryBase, c.RetryCap = time.Millisecond, 2*time.Millisecond
	return c
}

// harness is a started gateway Role and a client for it.
type harness struct {
	t    *testing.T
	r    *Role
	base string
	keys *auth.Keyring
	met  *runtime.Metrics
	hc   *http.Client
	stop func() // stops the role as the runtime manager does (once)
}

// startGateway builds the Role from cfg and loc (opts may change the rest
// of its Options), starts it, runs it, and stops it when the test ends.
func startGateway(t *testing.T, cfg Config, loc Locals, opts ...func(*Options)) *harness {
	t.Helper()
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	met := runtime.NewMetrics(nil)
	opt := Options{Config: cfg, Local: loc, Env: module.Env{Keys: keys, Metrics: met, Log: zerolog.Nop(), Version: "test"}}
	for _, o := range opts {
		o(&opt)
	}
	r := New(opt)
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.Start(ctx); err != nil {
		cancel()
		t.Fatalf("Start: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }() // the runtime manager's Run call
	tr := &http.Transport{MaxIdleConnsPerHost: 256}
	stop := sync.OnceFunc(func() {
		// Close the client's idle connections first: net/http's Shutdown
		// waits up to 5 s for a connection that never carried a request.
		tr.CloseIdleConnections()
		sctx, scancel := context.WithTimeout(context.Background(), testWait)
		defer scancel()
		if err := r.Stop(sctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(stop)
	hc := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &harness{t: t, r: r, base: "http://" + r.Addr(), keys: opt.Keys, met: met, hc: hc, stop: stop}
}

// with returns h reporting to t (a subtest).
func (h *harness) with(t *testing.T) *harness {
	c := *h
	c.t = t
	return &c
}

// token mints a client token of tenant ("" = none) with scopes.
func (h *harness) token(tenant string, scopes ...string) string {
	h.t.Helper()
	tok, _, err := h.keys.Mint(auth.MintOptions{Scopes: scopes, Tenant: tenant, TTL: time.Hour})
	if err != nil {
		h.t.Fatal(err)
	}
	return tok
}

// bearer is the Authorization value of a token of tenant with scopes.
func (h *harness) bearer(tenant string, scopes ...string) string {
	return "Bearer " + h.token(tenant, scopes...)
}

// req builds a request to the gateway; kv are header name, value pairs.
func (h *harness) req(method, path string, body []byte, kv ...string) *http.Request {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, h.base+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Add(kv[i], kv[i+1])
	}
	return req
}

// answer is a gateway response read to the end (err: the request or the
// body read failed).
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

func (a answer) String() string {
	if a.err != nil && a.status == 0 {
		return "error " + a.err.Error()
	}
	return fmt.Sprintf("%d %.300s (body error %v)", a.status, a.body, a.err)
}

// send sends req under testWait and reads the whole answer.
func (h *harness) send(req *http.Request) answer {
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	resp, err := h.hc.Do(req.WithContext(ctx))
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: body, err: err}
}

// do sends a request built by req and fails the test on a transport error.
func (h *harness) do(method, path string, body []byte, kv ...string) answer {
	h.t.Helper()
	a := h.send(h.req(method, path, body, kv...))
	if a.err != nil {
		h.t.Fatalf("%s %s: %v", method, path, a.err)
	}
	return a
}

// async sends req on its own goroutine; the answer arrives on the channel.
func (h *harness) async(req *http.Request) <-chan answer {
	out := make(chan answer, 1)
	go func() { out <- h.send(req) }() // owned: ends with the request (testWait)
	return out
}

// metric is the current value of a gateway series (role="gateway" added).
func (h *harness) metric(name string, labels ...string) float64 {
	return h.met.Values()[runtime.MetricName(name, append([]string{"role", roleName}, labels...)...)]
}

// envelope is the error envelope of an answer.
type envelope struct {
	Error struct {
		Code       string         `json:"code"`
		Message    string         `json:"message"`
		RetryAfter int            `json:"retry_after_s"`
		Details    map[string]any `json:"details"`
	} `json:"error"`
}

func envelopeOf(body []byte) envelope {
	var e envelope
	_ = json.Unmarshal(body, &e)
	return e
}

// want checks an answer's status and envelope code ("" = not an error).
func want(t *testing.T, what string, a answer, status int, code string) envelope {
	t.Helper()
	env := envelopeOf(a.body)
	if a.status != status || env.Error.Code != code {
		t.Fatalf("%s: %s, want %d %q", what, a, status, code)
	}
	return env
}

// wantLimit checks a 429/503 answer: status, code, an integer Retry-After
// ≥ 1 (exactly retry when retry > 0) and details[key] = value.
func wantLimit(t *testing.T, what string, a answer, status int, code, key, value string, retry int) {
	t.Helper()
	env := want(t, what, a, status, code)
	ra, err := strconv.Atoi(a.header.Get("Retry-After"))
	if err != nil || ra < 1 || (retry > 0 && ra != retry) {
		t.Errorf("%s: Retry-After %q, want an integer ≥ 1 (%d)", what, a.header.Get("Retry-After"), retry)
	}
	if got, _ := env.Error.Details[key].(string); got != value {
		t.Errorf("%s: details.%s = %q, want %q (%s)", what, key, got, value, a)
	}
}

// eventually polls cond until it holds, failing the test after testWait.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, testWait)
		}
		<-tick.C
	}
}

// seen is one request an upstream stub received.
type seen struct {
	method, path, query string // path as escaped on the wire
	header              http.Header
	body                []byte
	bodyErr             error // the body read failed (aborted upload)
	contentLength       int64
	transferEncoding    []string
	claims              *auth.Claims // in-process link principal
	reading             bool         // the body is still being read
}

// stub is an upstream role or provider: it records every request (reading
// its body to the end first) and answers with serve.
type stub struct {
	serve   func(w http.ResponseWriter, r *http.Request, body []byte)
	arrived chan struct{} // one token per request received

	mu   sync.Mutex
	seen []seen
}

// newStub returns a stub answering with serve (nil: 200 "ok").
func newStub(serve func(w http.ResponseWriter, r *http.Request, body []byte)) *stub {
	if serve == nil {
		serve = func(w http.ResponseWriter, _ *http.Request, _ []byte) { _, _ = io.WriteString(w, "ok") }
	}
	return &stub{serve: serve, arrived: make(chan struct{}, 1024)}
}

func (s *stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := len(s.seen)
	s.seen = append(s.seen, seen{method: r.Method, path: r.URL.EscapedPath(), query: r.URL.RawQuery,
		header: r.Header.Clone(), contentLength: r.ContentLength, transferEncoding: r.TransferEncoding,
		claims: auth.ClaimsFromContext(r.Context()), reading: true})
	s.mu.Unlock()
	body, err := io.ReadAll(r.Body)
	s.mu.Lock()
	s.seen[i].body, s.seen[i].bodyErr, s.seen[i].reading = body, err, false
	s.mu.Unlock()
	select {
	case s.arrived <- struct{}{}:
	default:
	}
	s.serve(w, r, body)
}

// requests returns what the stub received so far.
func (s *stub) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.seen...)
}

// settled waits until no request body is still being read and returns
// what the stub received.
func (s *stub) settled(t *testing.T) []seen {
	t.Helper()
	eventually(t, "upstream request bodies read", func() bool {
		for _, r := range s.requests() {
			if r.reading {
				return false
			}
		}
		return true
	})
	return s.requests()
}

// count is how many requests the stub received.
func (s *stub) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

// listen serves the stub over HTTP until the test ends; it returns the base
// URL. Register it before the gateway so that the gateway stops first.
func (s *stub) listen(t *testing.T) string {
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

// handler is the stub as a co-located role's handler (Locals).
func (s *stub) handler() func() http.Handler { return func() http.Handler { return s } }

// waitArrival waits for the stub to receive its next request.
func (s *stub) waitArrival(t *testing.T) {
	t.Helper()
	select {
	case <-s.arrived:
	case <-time.After(testWait):
		t.Fatalf("no request reached the upstream within %s", testWait)
	}
}

// status answers every request with code and a JSON error envelope.
func status(code int, errCode string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = fmt.Fprintf(w, `{"error":{"code":%q,"message":"stub","corr_id":"x"}}`, errCode)
	}
}

// blocking answers 200 once release is closed, or gives up when the
// request ends: a slow upstream that holds its scheduler slot.
func blocking(release <-chan struct{}) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, r *http.Request, _ []byte) {
		select {
		case <-release:
			_, _ = io.WriteString(w, "released")
		case <-r.Context().Done():
		}
	}
}

// closedURL is an http URL on which nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

// raw writes a raw HTTP/1.1 request to the gateway and reads the answer.
func (h *harness) raw(request string) (*http.Response, []byte) {
	h.t.Helper()
	d := net.Dialer{Timeout: testWait}
	conn, err := d.Dial("tcp", strings.TrimPrefix(h.base, "http://"))
	if err != nil {
		h.t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(testWait)); err != nil {
		h.t.Fatal(err)
	}
	if _, err := io.WriteString(conn, request); err != nil {
		h.t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		h.t.Fatalf("raw request: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}
