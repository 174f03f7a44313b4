package edge

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/httpx/inproc"
	"github.com/ronhq/ron/internal/fixtures"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
)

// testWait bounds the tests' waits for an asynchronous outcome; it is
// never slept.
const testWait = 10 * time.Second

// packsDir returns a new folder holding copies of the named fixtures
// ("pmtiles/stamen_toner_z3.pmtiles", …).
func packsDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(fixtures.Dir(t), n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(n)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// harness is a started edge Role, a client over its Handler, and its
// metrics.
type harness struct {
	r      *Role
	m      *runtime.Metrics
	client *http.Client
	stop   func() // stops the role as the runtime manager does (once)
}

// startRole starts an edge of DefaultConfig on an ephemeral port, changed
// by mutate, and stops it at cleanup.
func startRole(t *testing.T, mutate func(*Config, *Options)) *harness {
	t.Helper()
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	m := runtime.NewMetrics(nil)
	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	opt := Options{Env: module.Env{DataDir: t.TempDir(), Metrics: m, Log: zerolog.Nop(), Keys: keys, Version: "test"}}
	if mutate != nil {
		mutate(&cfg, &opt)
	}
	opt.Config = cfg
	r := New(opt)
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.Start(ctx); err != nil {
		cancel()
		t.Fatalf("Start: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }() // the runtime manager's Run call
	h := &harness{r: r, m: m, client: &http.Client{Transport: inproc.New(r.Handler())}}
	h.stop = sync.OnceFunc(func() {
		sctx, scancel := context.WithTimeout(context.Background(), testWait)
		defer scancel()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if err := r.Stop(sctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	t.Cleanup(h.stop)
	return h
}

// get sends a request through the role's handler and returns the answer
// with its body read.
func (h *harness) get(t *testing.T, method, path string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, "http://edge.test"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// fakeStorage is a co-located storage role's handler: GET|HEAD /o/{b3}
// and /o/{b3}/outboard over a map of objects. While block is set, object
// reads wait for their request to end and report that they started.
type fakeStorage struct {
	mu      sync.Mutex
	objects map[store.ID][]byte
	block   bool
	started chan struct{} // receives once per blocked read
	claims  []*auth.Claims
}

func newFakeStorage(objects ...[]byte) *fakeStorage {
	s := &fakeStorage{objects: map[store.ID][]byte{}, started: make(chan struct{}, 16)}
	for _, o := range objects {
		s.objects[store.Sum(o)] = o
	}
	return s
}

func (s *fakeStorage) handler() http.Handler { return s }

func (s *fakeStorage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/o/")
	raw, outboard := strings.CutSuffix(rest, "/outboard")
	id, err := store.ParseID(raw)
	s.mu.Lock()
	data, found := s.objects[id]
	block := s.block
	s.claims = append(s.claims, auth.ClaimsFromContext(r.Context()))
	s.mu.Unlock()
	if !ok || err != nil || !found {
		httpx.WriteError(w, "", httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no such object"))
		return
	}
	if outboard {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(verified.TreeOf(data).Outboard)
		return
	}
	if block {
		s.started <- struct{}{}
		<-r.Context().Done()
		return
	}
	w.Header().Set("ETag", `"`+id.String()+`"`)
	w.Header().Set("Content-Type", "text/plain")
	http.ServeContent(w, r, "", time.Time{}, strings.NewReader(string(data)))
}
