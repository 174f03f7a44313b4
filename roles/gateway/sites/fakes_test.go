package sites

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/manifest"
)

// fakeObjects is an in-memory Objects that serves like GET /o/{b3}: ETag,
// immutable Cache-Control, Accept-Ranges, stored Content-Type, Range and
// conditionals through httpx/ranges, then the caller's headers on top.
type fakeObjects struct {
	mu    sync.Mutex
	objs  map[store.ID]fakeObj
	calls map[string]int // "head", "readall", "serve"
}

type fakeObj struct {
	data  []byte
	ctype string
}

func newFakeObjects() *fakeObjects {
	return &fakeObjects{objs: map[store.ID]fakeObj{}, calls: map[string]int{}}
}

// put stores data with ctype and returns its id.
func (f *fakeObjects) put(data []byte, ctype string) store.ID {
	id := store.Sum(data)
	f.putAs(id, data, ctype)
	return id
}

// putAs stores data under id (possibly the wrong id, to simulate a liar).
func (f *fakeObjects) putAs(id store.ID, data []byte, ctype string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.objs[id] = fakeObj{data: data, ctype: ctype}
}

func (f *fakeObjects) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *fakeObjects) total() int { return f.count("head") + f.count("readall") + f.count("serve") }

func (f *fakeObjects) get(op string, id store.ID) (fakeObj, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op]++
	o, ok := f.objs[id]
	if !ok {
		return o, httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no such object")
	}
	return o, nil
}

func (f *fakeObjects) Head(_ context.Context, id store.ID) (string, error) {
	o, err := f.get("head", id)
	return o.ctype, err
}

func (f *fakeObjects) ReadAll(_ context.Context, id store.ID, max int64) ([]byte, error) {
	o, err := f.get("readall", id)
	if err != nil {
		return nil, err
	}
	if int64(len(o.data)) > max {
		return nil, fmt.Errorf("object of %d bytes: %w", len(o.data), ErrTooLarge)
	}
	return o.data, nil
}

func (f *fakeObjects) Serve(w http.ResponseWriter, r *http.Request, id store.ID, set http.Header) error {
	o, err := f.get("serve", id)
	if err != nil {
		return err
	}
	etag := `"` + id.String() + `"`
	size := int64(len(o.data))
	ctype := o.ctype
	if v := set.Get("Content-Type"); v != "" {
		ctype = v
	}
	p := ranges.NewPlan(r, size, etag, ctype, 16)
	switch p.Status {
	case http.StatusPreconditionFailed:
		return httpx.NewError(p.Status, httpx.CodePreconditionFailed, "precondition failed")
	case http.StatusRequestedRangeNotSatisfiable:
		return httpx.NewError(p.Status, httpx.CodeRangeNotSatisfiable, "range not satisfiable")
	}
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("Accept-Ranges", "bytes")
	p.SetHeaders(h, size, ctype)
	for k, v := range set {
		h[k] = v
	}
	w.WriteHeader(p.Status)
	if r.Method == http.MethodHead {
		return nil
	}
	return p.WriteBody(w, size, ctype, func(w io.Writer, off, n int64) error {
		_, err := w.Write(o.data[off : off+n])
		return err
	})
}

// fakeResolver answers from a map; unknown keys are 404.
type fakeResolver struct {
	mu    sync.Mutex
	names map[string]store.ID
	errs  map[string]error
	calls map[string]int
	gate  chan struct{} // when set, Resolve waits for it (or ctx)
}

func newFakeResolver() *fakeResolver {
	return &fakeResolver{names: map[string]store.ID{}, errs: map[string]error{}, calls: map[string]int{}}
}

func (f *fakeResolver) set(key string, id store.ID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.names[key] = id
	delete(f.errs, key)
}

func (f *fakeResolver) fail(key string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs[key] = err
}

func (f *fakeResolver) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[key]
}

func (f *fakeResolver) Resolve(ctx context.Context, key string) (store.ID, error) {
	f.mu.Lock()
	f.calls[key]++
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return store.ID{}, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, ok := f.errs[key]; ok {
		return store.ID{}, err
	}
	id, ok := f.names[key]
	if !ok {
		return store.ID{}, httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "unknown name")
	}
	return id, nil
}

// env is a Sites over fakes plus an http.Handler that routes /n like the
// gateway: name = first escaped segment after /n/, rest = the remainder.
type env struct {
	t   *testing.T
	obj *fakeObjects
	res *fakeResolver
	met *runtime.Metrics
	s   *Sites
}

func newEnv(t *testing.T, opt Options) *env {
	e := &env{t: t, obj: newFakeObjects(), res: newFakeResolver(), met: runtime.NewMetrics(nil)}
	opt.Objects, opt.Resolver, opt.Metrics = e.obj, e.res, e.met
	e.s = New(opt)
	return e
}

func (e *env) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(r.URL.EscapedPath(), "/n/")
	name, rest := p, ""
	if i := strings.IndexByte(p, '/'); i >= 0 {
		name, rest = p[:i], p[i:]
	}
	if err := e.s.Serve(w, r, name, rest, r.URL.RawQuery); err != nil {
		httpx.WriteError(w, "test", err)
	}
}

// do runs one request with optional header pairs.
func (e *env) do(method, target string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	e.ServeHTTP(w, r)
	return w
}

// file is one test site file.
type file struct {
	path, body, ctype string
}

// siteFiles is the standard test site.
var siteFiles = []file{
	{"index.html", "<h1>home</h1>", "text/html; charset=utf-8"},
	{"a-b.txt", "dash", ""},
	{"css/site.css", "body{}", "text/css"},
	{"img/a.png", "PNGA", "image/png"},
	{"img/b.png", "PNGBB", "image/png"},
	{"img/icons/x.svg", "<svg/>", "image/svg+xml"},
	{"docs/index.html", "<h1>docs</h1>", "text/html"},
	{"docs/guide.html", "guide", "text/html"},
	{"empty.bin", "", "application/octet-stream"},
	{"sp ace/ü.txt", "unicode", "text/plain"},
}

// publish stores files and their canonical manifest, and points name at it.
func (e *env) publish(name string, files []file) store.ID {
	e.t.Helper()
	m := manifest.ManifestV1{Entries: map[string]manifest.Entry{}}
	for _, f := range files {
		ct := f.ctype
		if ct == "" {
			ct = manifest.GuessType(f.path)
		}
		id := e.obj.put([]byte(f.body), ct)
		m.Entries[f.path] = manifest.Entry{ID: id, Size: int64(len(f.body)), Type: ct}
	}
	raw, err := manifest.Encode(m)
	if err != nil {
		e.t.Fatal(err)
	}
	id := e.obj.put(raw, manifest.MediaType)
	e.res.set(name, id)
	return id
}

// publishRaw stores raw manifest text and points name at it.
func (e *env) publishRaw(name, raw string) store.ID {
	id := e.obj.put([]byte(raw), manifest.MediaType+"; charset=utf-8")
	e.res.set(name, id)
	return id
}

func idOf(s string) store.ID { return store.Sum([]byte(s)) }

func etag(s string) string { return `"` + idOf(s).String() + `"` }

// wantError checks status and envelope code (and details.reason when set).
func wantError(t *testing.T, w *httptest.ResponseRecorder, status int, code, reason string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d; body %s", w.Code, status, w.Body)
	}
	he := httpx.DecodeError(w.Code, w.Body.Bytes())
	if he.Code != code {
		t.Fatalf("code %q, want %q; body %s", he.Code, code, w.Body)
	}
	if reason != "" && he.Details["reason"] != reason {
		t.Fatalf("details.reason %v, want %q; body %s", he.Details["reason"], reason, w.Body)
	}
}
