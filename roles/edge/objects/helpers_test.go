package objects

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/httpx/inproc"
	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const cs = store.ChunkSize

// pattern returns n deterministic pseudo-random bytes and their id.
func pattern(seed uint64, n int) ([]byte, store.ID) {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b, store.Sum(b)
}

// fakeObj is what a fake storage node serves for one id.
type fakeObj struct {
	data     []byte // the body
	outboard []byte // the Bao outboard; nil: 404 there (a ron before verified streaming)
	ctype    string
	// fails are statuses answered, in turn, to the first requests of the
	// object (outboard or body); then it answers normally.
	fails []int
	// stallHeaders: every request hangs until the client leaves.
	stallHeaders bool
	// gate, when set, holds body GETs after gateAfter bytes until closed.
	gate      chan struct{}
	gateAfter int
}

// servingObj serves o.
func servingObj(o vfetchtest.Object) *fakeObj {
	return &fakeObj{data: o.Data, outboard: o.Outboard, ctype: "text/plain; charset=utf-8"}
}

// honestObj serves data truthfully.
func honestObj(data []byte) *fakeObj { return servingObj(vfetchtest.Honest(data)) }

// corruptObj serves the true outboard of data with the byte at off
// flipped.
func corruptObj(data []byte, off int) *fakeObj { return servingObj(vfetchtest.Corrupt(data, off)) }

// selfConsistentObj serves bytes with the byte at off flipped and the
// outboard of those bytes, under the true id: no group verifies.
func selfConsistentObj(data []byte, off int) *fakeObj {
	return servingObj(vfetchtest.SelfConsistent(data, off))
}

// fakeStore is a storage node or provider: GET|HEAD /o/{b3} (Range through
// http.ServeContent) and GET /o/{b3}/outboard. It records every request.
type fakeStore struct {
	mu      sync.Mutex
	objects map[store.ID]*fakeObj
	reqs    []*http.Request
	gets    atomic.Int64 // body GETs
}

func newFakeStore() *fakeStore { return &fakeStore{objects: map[store.ID]*fakeObj{}} }

func (s *fakeStore) put(id store.ID, o *fakeObj) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[id] = o
}

// requests returns the requests seen so far.
func (s *fakeStore) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.reqs...)
}

// lookup finds the object of a request and pops its next failure status.
func (s *fakeStore) lookup(r *http.Request) (obj *fakeObj, outboard bool, fail int) {
	rest, _ := strings.CutPrefix(r.URL.Path, "/o/")
	rest, outboard = strings.CutSuffix(rest, "/outboard")
	id, err := store.ParseID(rest)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
	if err != nil || s.objects[id] == nil {
		return nil, outboard, 0
	}
	obj = s.objects[id]
	if len(obj.fails) > 0 {
		fail, obj.fails = obj.fails[0], obj.fails[1:]
	}
	return obj, outboard, fail
}

func (s *fakeStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	obj, outboard, fail := s.lookup(r)
	switch {
	case obj == nil:
		httpx.WriteError(w, "", httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no such object"))
		return
	case fail != 0:
		w.WriteHeader(fail)
		return
	case obj.stallHeaders:
		<-r.Context().Done()
		return
	case outboard && obj.outboard == nil:
		httpx.WriteError(w, "", httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no route"))
		return
	case outboard:
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(obj.outboard)
		return
	}
	if r.Method == http.MethodGet {
		s.gets.Add(1)
	}
	w.Header().Set("Content-Type", obj.ctype)
	if obj.gate != nil && r.Method == http.MethodGet && r.Header.Get("Range") == "" {
		s.serveGated(w, r, obj)
		return
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(obj.data))
}

// serveGated sends gateAfter bytes, waits for the gate, then the rest.
func (s *fakeStore) serveGated(w http.ResponseWriter, r *http.Request, obj *fakeObj) {
	if obj.gateAfter == 0 {
		select {
		case <-obj.gate:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(obj.data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(obj.data[:obj.gateAfter])
	_ = http.NewResponseController(w).Flush()
	select {
	case <-obj.gate:
	case <-r.Context().Done():
		return
	}
	_, _ = w.Write(obj.data[obj.gateAfter:])
}

// memNet routes requests by host to in-process handlers (no sockets, so
// testing/synctest bubbles can go idle). Unknown hosts refuse.
type memNet map[string]http.Handler

func (n memNet) RoundTrip(r *http.Request) (*http.Response, error) {
	h, ok := n[r.URL.Host]
	if !ok {
		return nil, errors.New("connection refused")
	}
	return inproc.New(h).RoundTrip(r)
}

func (n memNet) client() *http.Client {
	return &http.Client{Transport: n, CheckRedirect: client.NoRedirects}
}

// env is an Objects behind an echo router, with its cache, queue, workers
// and a client reaching it in-process.
type env struct {
	t      *testing.T
	o      *Objects
	cache  *edgecache.Cache
	q      *fillq.Queue
	m      *runtime.Metrics
	h      http.Handler
	client *http.Client
	lim    atomic.Pointer[Limits]
}

// envOptions tune newEnv.
type envOptions struct {
	storage   *Source
	providers []string
	token     string
	net       memNet // provider hosts
	workers   int    // 0: 4; < 0: none started
	queueCap  int    // 0: 64
	lim       Limits
	memBudget int64 // cache budget (memory mode); 0: 64 MiB
}

func newEnv(t *testing.T, eo envOptions) *env {
	e := &env{t: t, m: runtime.NewMetrics(nil)}
	budget := cmp(eo.memBudget, 64<<20)
	c, err := edgecache.Open(edgecache.Options{MaxBytes: budget, Metrics: e.m, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	e.cache = c
	e.q = fillq.New(e.m, "edge", int(cmp(int64(eo.queueCap), 64)))
	lim := eo.lim
	if lim.FillMaxBytes == 0 {
		lim.FillMaxBytes = 64 << 20
	}
	e.lim.Store(&lim)
	opt := Options{Cache: c, Queue: e.q, Storage: eo.storage, Metrics: e.m, Log: zerolog.Nop(),
		Limits: func() Limits { return *e.lim.Load() }, ProviderClient: eo.net.client(),
		ProviderToken: func() string { return eo.token }}
	if eo.providers != nil {
		opt.Providers = func(context.Context, store.ID) ([]string, error) { return eo.providers, nil }
	}
	e.o = New(opt)
	e.h = router(e.o)
	e.client = memNet{"edge.test": e.h}.client()
	g := runtime.NewTaskGroup("edge", zerolog.Nop(), e.m)
	if eo.workers >= 0 {
		e.q.Start(g, int(cmp(int64(eo.workers), 4)))
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		e.q.Drain(ctx)
		g.Stop(ctx)
		_ = c.Close()
	})
	return e
}

// cmp is v, or def when v is 0.
func cmp(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}

// router mounts o as the edge role does, with envelopes for errors and a
// deadline from X-Test-Timeout (real sockets carry no client deadline).
func router(o *Objects) *echo.Echo {
	e := echo.New()
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if !c.Response().Committed {
			httpx.WriteError(c.Response(), "", err)
		}
	}
	e.Match([]string{http.MethodGet, http.MethodHead}, "/o/:b3", o.Serve, testDeadline)
	return e
}

func testDeadline(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		d, err := time.ParseDuration(c.Request().Header.Get("X-Test-Timeout"))
		if err != nil {
			return next(c)
		}
		ctx, cancel := context.WithTimeout(c.Request().Context(), d)
		defer cancel()
		c.SetRequest(c.Request().WithContext(ctx))
		return next(c)
	}
}

// result is a client's view of one answer.
type result struct {
	status int
	header http.Header
	body   []byte
	err    error // the request's or the body read's error
}

// get sends method /o/id with header pairs through the env's client.
func (e *env) get(ctx context.Context, method string, id string, hdr ...string) result {
	req, err := http.NewRequestWithContext(ctx, method, "http://edge.test/o/"+id, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	return do(e.client, req)
}

func do(c *http.Client, req *http.Request) result {
	resp, err := c.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return result{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

// metric reads one series of the env's metrics.
func (e *env) metric(name string, labels ...string) float64 {
	return e.m.Values()[runtime.MetricName(name, append([]string{"role", "edge"}, labels...)...)]
}

// wantBody fails unless r is a whole 200 with data.
func wantBody(t *testing.T, what string, r result, data []byte) {
	t.Helper()
	if r.err != nil || r.status != http.StatusOK || !bytes.Equal(r.body, data) {
		t.Fatalf("%s: %d, %d bytes, %v; want 200 with the %d-byte object", what, r.status, len(r.body), r.err, len(data))
	}
}

// httpSource is an HTTP storage source on n's host.
func httpSource(n memNet, host string) *Source {
	return &Source{Name: "storage", BaseURL: "http://" + host, Client: n.client(),
		Prepare: func(r *http.Request) { r.Header.Set("Authorization", "Bearer storage-token") }}
}

// storageHolding is a network with one storage, "storage.test", holding
// obj under id.
func storageHolding(id store.ID, obj *fakeObj) (memNet, *fakeStore) {
	s := newFakeStore()
	s.put(id, obj)
	return memNet{"storage.test": s}, s
}
