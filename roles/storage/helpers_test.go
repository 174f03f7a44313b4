package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
	"github.com/ronhq/ron/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Spec vectors (docs/storage.md §1).
const (
	helloID   = "b3:d74981efa70a0c880b8d8c1985d075dbcbf679b99a5f9914e5aaf96b831a9e24"
	emptyID   = "b3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
	hex16ID   = "b3:b8f6b168214bf501f5a4b84bff9e105cc5c1f3851b798dcb55ffe887391e84b0"
	bigID     = "b3:bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085"
	bigChunk0 = "b3:68d647e619a930e7b1082f74f334b0c65a315725569bdc123f0ee11881717bfe"
	bigChunk1 = "b3:1b314bec1682449387dbf17690bdd41311bdf21f3062998c1b89a631ac26dae2"
)

// bigBody is the 102,400-byte vector: byte i = i mod 251.
func bigBody() []byte {
	b := make([]byte, 102400)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

func mustID(t testing.TB, s string) store.ID {
	t.Helper()
	id, err := store.ParseID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// fakeSink records every announced batch.
type fakeSink struct {
	mu      sync.Mutex
	batches [][]announcing.Record
	fail    int // fail the next fail calls
	err     error
	notify  chan struct{}
}

func newFakeSink() *fakeSink { return &fakeSink{notify: make(chan struct{}, 1)} }

// wait blocks until ok(records) holds; it fails the test after 10 s.
func (s *fakeSink) wait(t *testing.T, ok func([]announcing.Record) bool) []announcing.Record {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		if recs := s.records(); ok(recs) {
			return recs
		}
		select {
		case <-s.notify:
		case <-timeout.C:
			t.Fatalf("sink got %v", s.records())
		}
	}
}

func (s *fakeSink) Announce(ctx context.Context, batch []announcing.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 {
		s.fail--
		return s.err
	}
	s.batches = append(s.batches, append([]announcing.Record(nil), batch...))
	if s.notify != nil {
		select {
		case s.notify <- struct{}{}:
		default:
		}
	}
	return nil
}

func (s *fakeSink) records() []announcing.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []announcing.Record
	for _, b := range s.batches {
		out = append(out, b...)
	}
	return out
}

// testRole is a started, running storage role on 127.0.0.1:0.
type testRole struct {
	*Role
	t    *testing.T
	keys *auth.Keyring
	sink *fakeSink
	base string
	http *http.Client
}

// startRole starts a role with cfg modified by mod, a temp data dir, fresh
// metrics and keys, and a fake sink. It stops at the end of the test.
func startRole(t *testing.T, mod func(*Config)) *testRole {
	t.Helper()
	return startRoleOpts(t, mod, nil)
}

// startRoleOpts is startRole with the Options adjusted by opts (after the
// fake sink is set, so opts may replace it).
func startRoleOpts(t *testing.T, mod func(*Config), opts func(*Options)) *testRole {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	if mod != nil {
		mod(&cfg)
	}
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	sink := newFakeSink()
	opt := Options{Config: cfg, Sink: sink, Env: module.Env{DataDir: t.TempDir(), Log: zerolog.Nop(), Metrics: runtime.NewMetrics(nil), Keys: keys, Version: "test"}}
	if opts != nil {
		opts(&opt)
	}
	r := New(opt)
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	tr := &testRole{Role: r, t: t, keys: keys, sink: sink, base: "http://" + r.Addr(),
		http: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
	t.Cleanup(func() {
		tr.http.CloseIdleConnections()
		sctx, scancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer scancel()
		_ = r.Stop(sctx)
		cancel()
		<-done
	})
	return tr
}

// token mints a one-hour token with scopes.
func (tr *testRole) token(scopes ...string) string {
	tr.t.Helper()
	tok, _, err := tr.keys.Mint(auth.MintOptions{Scopes: scopes, TTL: time.Hour})
	if err != nil {
		tr.t.Fatal(err)
	}
	return tok
}

// expiredToken mints a storage:write token that expired an hour ago.
func (tr *testRole) expiredToken() string {
	tr.t.Helper()
	tok, _, err := tr.keys.Mint(auth.MintOptions{Scopes: []string{storageapi.ScopeWrite}, TTL: time.Hour, Now: time.Now().Add(-2 * time.Hour)})
	if err != nil {
		tr.t.Fatal(err)
	}
	return tok
}

// req is one raw HTTP request in a test.
type req struct {
	method, path string
	body         io.Reader
	token        string
	header       []string // key, value pairs
	length       int64    // > 0 or -1 (chunked) overrides the Content-Length
}

// do sends q and returns the response with its body read.
func (tr *testRole) do(q req) (*http.Response, []byte) {
	tr.t.Helper()
	hr, err := http.NewRequest(q.method, tr.base+q.path, q.body)
	if err != nil {
		tr.t.Fatal(err)
	}
	if q.token != "" {
		hr.Header.Set("Authorization", "Bearer "+q.token)
	}
	for i := 0; i+1 < len(q.header); i += 2 {
		hr.Header.Set(q.header[i], q.header[i+1])
	}
	if q.length != 0 {
		hr.ContentLength = q.length
	}
	resp, err := tr.http.Do(hr)
	if err != nil {
		tr.t.Fatalf("%s %s: %v", q.method, q.path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tr.t.Fatalf("%s %s: read body: %v", q.method, q.path, err)
	}
	return resp, body
}

// put stores body with POST /o and a write token, returning the id.
func (tr *testRole) put(body []byte, ctype string) string {
	tr.t.Helper()
	q := req{method: http.MethodPost, path: "/o", body: bytes.NewReader(body), token: tr.token(storageapi.ScopeWrite)}
	if ctype != "" {
		q.header = []string{"Content-Type", ctype}
	}
	resp, b := tr.do(q)
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		tr.t.Fatalf("put: %d %s", resp.StatusCode, b)
	}
	var out putReply
	if err := json.Unmarshal(b, &out); err != nil {
		tr.t.Fatal(err)
	}
	return out.CID
}

// envelope decodes an error body, failing if it is not the envelope.
func envelope(t *testing.T, body []byte) *httpx.Error {
	t.Helper()
	var env httpx.Envelope
	if err := json.Unmarshal(body, &env); err != nil || env.Error == nil {
		t.Fatalf("not an error envelope: %q (%v)", body, err)
	}
	return env.Error
}

// wantError checks status and error code of a response.
func wantError(t *testing.T, resp *http.Response, body []byte, status int, code string) *httpx.Error {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	e := envelope(t, body)
	if e.Code != code {
		t.Fatalf("code %q, want %q: %s", e.Code, code, body)
	}
	if (status == 429 || status == 503) && resp.Header.Get("Retry-After") == "" {
		t.Fatalf("%d without Retry-After", status)
	}
	return e
}

// scrape parses the role's metrics set from its Prometheus text into
// series → value.
func (tr *testRole) scrape() map[string]float64 {
	return scrapeSet(tr.t, tr.opt.Metrics)
}

func scrapeSet(t *testing.T, m *runtime.Metrics) map[string]float64 {
	t.Helper()
	return m.Values()
}

// metric returns one series' value (0 when absent: counters appear on first
// use).
func (tr *testRole) metric(series string) float64 {
	return tr.scrape()[series]
}

// series builds a storage-role series name.
func series(name string, labels ...string) string {
	return runtime.MetricName(name, append([]string{"role", roleName}, labels...)...)
}
