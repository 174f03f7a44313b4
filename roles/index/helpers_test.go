package index

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/internal/testclock"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/store/kv/memkv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Object ids used as pointer targets.
const (
	idA = "b3:d74981efa70a0c880b8d8c1985d075dbcbf679b99a5f9914e5aaf96b831a9e24"
	idB = "b3:ced5d8e546f32566fd3e768ca208299be821a2147db8894d04492243f22fa331"
)

// env is one index node's handlers behind the shared middleware chain.
type env struct {
	t       *testing.T
	clk     *testclock.Clock
	db      *indexdb.DB
	h       *Handlers
	srv     *httpx.Server
	writer  string // token with index:write
	reader  string // token with storage:write only
	expired string // index:write token that expires after 1 h
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clk := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	db, err := indexdb.Open(context.Background(), memkv.New(), clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	mint := func(scope string, ttl time.Duration) string {
		tok, _, err := keys.Mint(auth.MintOptions{Scopes: []string{scope}, TTL: ttl, Now: clk.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	srv := httpx.NewServer(httpx.ServerOptions{Role: "index", Log: zerolog.Nop(), Metrics: metrics.NewSet(),
		Limits: httpx.DefaultIngress().Limits()})
	h := NewHandlers(db, keys, clk.Now)
	h.Mount(srv.Echo())
	return &env{t: t, clk: clk, db: db, h: h, srv: srv,
		writer: mint(indexapi.ScopeWrite, 24*time.Hour), reader: mint("storage:write", 24*time.Hour),
		expired: mint(indexapi.ScopeWrite, time.Hour)}
}

// req describes one request; token "" sends no Authorization header.
type req struct {
	method, path, body string
	token              string
	ctype              string // default application/json when body is set
	hdr                map[string]string
}

// resp is a recorded answer.
type resp struct {
	code int
	hdr  http.Header
	body []byte
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
	return m
}

// errCode returns error.code of an envelope body, "" if none.
func (r resp) errCode() string {
	var env httpx.Envelope
	if json.Unmarshal(r.body, &env) != nil || env.Error == nil {
		return ""
	}
	return env.Error.Code
}

// details returns error.details of an envelope body.
func (r resp) details(t *testing.T) map[string]any {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	return d
}

func (e *env) do(r req) resp {
	e.t.Helper()
	var body io.Reader = http.NoBody
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr := httptest.NewRequest(r.method, r.path, body)
	if r.body != "" || r.ctype != "" {
		ct := r.ctype
		if ct == "" {
			ct = "application/json"
		}
		hr.Header.Set("Content-Type", ct)
	}
	if r.token != "" {
		hr.Header.Set("Authorization", "Bearer "+r.token)
	}
	for k, v := range r.hdr {
		hr.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.srv.Echo().ServeHTTP(rec, hr)
	return resp{code: rec.Code, hdr: rec.Header(), body: rec.Body.Bytes()}
}

// put sets name to target with an index:write token and optional headers.
func (e *env) put(name, target string, hdr map[string]string) resp {
	e.t.Helper()
	return e.do(req{method: "PUT", path: "/names/" + name, body: `{"b3":"` + target + `"}`, token: e.writer, hdr: hdr})
}

// expect checks status and error code ("" = no envelope expected).
func expect(t *testing.T, r resp, status int, code string) {
	t.Helper()
	if r.code != status || r.errCode() != code {
		t.Fatalf("got %d %q (%s), want %d %q", r.code, r.errCode(), r.body, status, code)
	}
	if code != "" && r.hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("error Content-Type %q", r.hdr.Get("Content-Type"))
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// set changes h's settings with fn (tests configure handlers this way).
func (h *Handlers) set(fn func(*Settings)) {
	s := h.settings()
	fn(&s)
	h.Reconfigure(s)
}
