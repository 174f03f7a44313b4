package live

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/internal/pipenet"
	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/runtime"
)

// originHost is the test origin's address on the pipe network.
const originHost = "origin.test:80"

// fakeOrigin is a scripted origin that records what it was sent.
type fakeOrigin struct {
	mu      sync.Mutex
	handler http.HandlerFunc
	seen    []*http.Request // method, URL, header of each request (bodies read into seenBody)
	bodies  []string
}

// serve records r and runs the current handler.
func (o *fakeOrigin) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	o.mu.Lock()
	o.seen = append(o.seen, r.Clone(context.Background()))
	o.bodies = append(o.bodies, string(b))
	h := o.handler
	o.mu.Unlock()
	h(w, r)
}

// set replaces the handler.
func (o *fakeOrigin) set(h http.HandlerFunc) {
	o.mu.Lock()
	o.handler = h
	o.mu.Unlock()
}

// count is the number of requests the origin saw.
func (o *fakeOrigin) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.seen)
}

// last is the last request the origin saw.
func (o *fakeOrigin) last() *http.Request {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.seen) == 0 {
		return nil
	}
	return o.seen[len(o.seen)-1]
}

// envConfig tunes a test environment.
type envConfig struct {
	origin    func(*Origin)
	settings  func(*Settings)
	queueCap  int
	workers   int
	cacheDir  string
	cacheMax  int64
	noWorkers bool
}

// env is a Live in front of a fakeOrigin on a pipe network, run inside a
// synctest bubble (the caller's).
type env struct {
	t     *testing.T
	o     *fakeOrigin
	ln    *pipenet.Listener // the origin's network (SetRefuse: unreachable)
	m     *runtime.Metrics
	cache *edgecache.Cache
	q     *fillq.Queue
	g     *runtime.TaskGroup
	l     *Live
	echo  *echo.Echo
}

func newEnv(t *testing.T, cfg envConfig) *env {
	t.Helper()
	o := &fakeOrigin{handler: func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") }}
	ln := pipenet.New(originHost)
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(o.serve)}}
	srv.Start()
	tr := &http.Transport{DialContext: ln.DialContext, DisableCompression: true}
	m := runtime.NewMetrics(nil)
	if cfg.cacheMax == 0 {
		cfg.cacheMax = 64 << 20
	}
	cache, err := edgecache.Open(edgecache.Options{Dir: cfg.cacheDir, MaxBytes: cfg.cacheMax, MaxVariants: 4, Metrics: m, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.queueCap == 0 {
		cfg.queueCap = 512
	}
	if cfg.workers == 0 {
		cfg.workers = 4
	}
	q := fillq.New(m, roleName, cfg.queueCap)
	g := runtime.NewTaskGroup(roleName, zerolog.Nop(), m)
	if !cfg.noWorkers {
		q.Start(g, cfg.workers)
	}
	u, _ := url.Parse("http://" + originHost)
	org := Origin{Name: "o", URL: u, MaxTries: 1, HonorRequestCacheControl: true}
	if cfg.origin != nil {
		cfg.origin(&org)
	}
	s := Settings{Origins: []Origin{org}, HeuristicMaxTTL: 24 * time.Hour, StaleIfUnreachable: time.Minute}
	if cfg.settings != nil {
		cfg.settings(&s)
	}
	l := New(Options{Cache: cache, Queue: q, Client: &http.Client{Transport: tr}, Metrics: m, Log: zerolog.Nop()}, s)
	hs := httpx.NewServer(httpx.ServerOptions{Role: roleName, Log: zerolog.Nop(), Metrics: m.Set(),
		Streaming: func(string, string) bool { return true }})
	e := hs.Echo()
	e.Any("/assets/*", l.Serve)
	e.RouteNotFound("/assets/*", l.Serve)
	env := &env{t: t, o: o, ln: ln, m: m, cache: cache, q: q, g: g, l: l, echo: e}
	t.Cleanup(func() {
		q.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		q.Drain(ctx)
		g.Stop(ctx)
		l.Close()
		tr.CloseIdleConnections()
		srv.Close()
		_ = cache.Close()
	})
	return env
}

// request builds a request to path with header pairs and a 5 s deadline
// (the role's request_timeout).
func request(method, path string, body io.Reader, hdr ...string) (*http.Request, context.CancelFunc) {
	r := httptest.NewRequest(method, path, body)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	return r.WithContext(ctx), cancel
}

// do sends one request through the edge and returns the recorded answer.
func (e *env) do(method, path string, hdr ...string) *httptest.ResponseRecorder {
	return e.doBody(method, path, nil, hdr...)
}

// doBody is do with a request body. The background work the request
// caused (fill commits, revalidations) settles before it returns.
func (e *env) doBody(method, path string, body io.Reader, hdr ...string) *httptest.ResponseRecorder {
	r, cancel := request(method, path, body, hdr...)
	defer cancel()
	rec := httptest.NewRecorder()
	e.echo.ServeHTTP(rec, r)
	synctest.Wait()
	return rec
}

// get is do for GET.
func (e *env) get(path string, hdr ...string) *httptest.ResponseRecorder {
	return e.do(http.MethodGet, path, hdr...)
}

// metric returns one series of the env's metrics.
func (e *env) metric(series string) float64 {
	return e.m.Values()[series]
}

// lookups is ron_edge_cache_lookups_total for result.
func (e *env) lookups(result string) float64 {
	return e.metric(`ron_edge_cache_lookups_total{role="edge",result="` + result + `",route="/assets/{origin}/{path...}"}`)
}

// rejects is ron_edge_rejects_total for reason.
func (e *env) rejects(reason string) float64 {
	return e.metric(`ron_edge_rejects_total{role="edge",reason="` + reason + `"}`)
}

// fills is ron_edge_fills_total for result.
func (e *env) fills(result string) float64 {
	return e.metric(`ron_edge_fills_total{role="edge",result="` + result + `",source="origin"}`)
}

// reply returns an origin handler answering status with header pairs and
// body.
func reply(status int, body string, hdr ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Add(hdr[i], hdr[i+1])
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// expect checks status, body and header pairs of an answer.
func expect(t *testing.T, rec *httptest.ResponseRecorder, status int, body string, hdr ...string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d (body %q)", rec.Code, status, rec.Body.String())
	}
	if body != "*" && rec.Body.String() != body {
		t.Fatalf("body %q, want %q", rec.Body.String(), body)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if got := strings.Join(rec.Header().Values(hdr[i]), ", "); got != hdr[i+1] {
			t.Errorf("%s = %q, want %q", hdr[i], got, hdr[i+1])
		}
	}
}

// errorCode decodes the envelope of an error answer.
func errorCode(t *testing.T, rec *httptest.ResponseRecorder) (code, reason string) {
	t.Helper()
	he := httpx.DecodeError(rec.Code, rec.Body.Bytes())
	r, _ := he.Details["reason"].(string)
	return he.Code, r
}

// doAborted sends a request whose answer may be aborted mid-body
// (http.ErrAbortHandler); aborted reports it.
func (e *env) doAborted(method, path string, hdr ...string) (rec *httptest.ResponseRecorder, aborted bool) {
	r, cancel := request(method, path, nil, hdr...)
	defer cancel()
	rec = httptest.NewRecorder()
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				panic(p)
			}
			aborted = true
		}
	}()
	e.echo.ServeHTTP(rec, r)
	return rec, false
}

// serveEdge serves the edge on a pipe network and returns a client of it
// (for what a recorder cannot show, like interim responses).
func (e *env) serveEdge() *http.Client {
	ln := pipenet.New("edge.test:80")
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: e.echo}}
	srv.Start()
	tr := &http.Transport{DialContext: ln.DialContext, DisableCompression: true}
	e.t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
	})
	return &http.Client{Transport: tr}
}

// contextWithTimeout is r's context with a deadline d from now.
func contextWithTimeout(r *http.Request, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), d)
}

// getNoWait is get for goroutines other than the test's own (synctest.Wait
// allows one caller at a time).
func (e *env) getNoWait(path string, hdr ...string) *httptest.ResponseRecorder {
	r, cancel := request(http.MethodGet, path, nil, hdr...)
	defer cancel()
	rec := httptest.NewRecorder()
	e.echo.ServeHTTP(rec, r)
	return rec
}
