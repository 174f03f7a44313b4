package edge

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/internal/fixtures"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
	"github.com/ronhq/ron/store"
)

// benchRole starts an edge (cache on disk unless amnesia) mounting
// stamen_toner_z3 and filling /o from a fake co-located storage holding
// objects; it stops at the end of the benchmark.
func benchRole(b *testing.B, amnesia bool, objects ...[]byte) *Role {
	b.Helper()
	dir := b.TempDir()
	src, err := os.ReadFile(filepath.Join(fixtures.Dir(b), "pmtiles", "stamen_toner_z3.pmtiles"))
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stamen_toner_z3.pmtiles"), src, 0o600); err != nil {
		b.Fatal(err)
	}
	keys, err := auth.GenerateKeyring()
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.PacksDir = dir
	st := newFakeStorage(objects...)
	r := New(Options{Config: cfg, Local: Locals{Storage: st.handler}, Env: module.Env{DataDir: b.TempDir(), Amnesia: amnesia, Metrics: runtime.NewMetrics(nil), Log: zerolog.Nop(), Keys: keys, Version: "bench"}})
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.Start(ctx); err != nil {
		cancel()
		b.Fatalf("Start: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }() // the runtime manager's Run call
	b.Cleanup(func() {
		cancel()
		<-done
		sctx, scancel := context.WithTimeout(context.Background(), testWait)
		defer scancel()
		if err := r.Stop(sctx); err != nil {
			b.Errorf("Stop: %v", err)
		}
	})
	return r
}

// sink is a ResponseWriter that keeps the status and headers and drops the
// body.
type sink struct {
	h    http.Header
	code int
	n    int
}

func (s *sink) Header() http.Header         { return s.h }
func (s *sink) Write(p []byte) (int, error) { s.n += len(p); return len(p), nil }
func (s *sink) WriteHeader(code int)        { s.code = code }

// SetWriteDeadline accepts deadlines as a server connection does.
func (s *sink) SetWriteDeadline(time.Time) error { return nil }

// runHits serves the requests round-robin through h from parallel
// goroutines, each with its own clones, and fails on another status.
func runHits(b *testing.B, h http.Handler, reqs []*http.Request, want int) {
	b.Helper()
	for _, r := range reqs {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r.Clone(r.Context()))
		if rec.Code != want {
			b.Fatalf("%s: %d %s", r.URL, rec.Code, rec.Body)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := &sink{h: http.Header{}}
		mine := make([]*http.Request, len(reqs))
		for i, r := range reqs {
			mine[i] = r.Clone(r.Context())
		}
		for i := 0; pb.Next(); i++ {
			clear(w.h)
			w.code = 0
			h.ServeHTTP(w, mine[i%len(mine)])
			if w.code != want {
				b.Errorf("status %d", w.code)
				return
			}
		}
	})
}

// BenchmarkHandlerTileHit: warm tile hits through the role's whole handler
// (shared middleware chain, the role's guard, deadline and CORS, the tiles
// handler), cycling through every tile of stamen_toner_z3 as
// scripts/bench/edge.sh does.
func BenchmarkHandlerTileHit(b *testing.B) {
	r := benchRole(b, false)
	var reqs []*http.Request
	for z := 0; z <= 3; z++ {
		for x := 0; x < 1<<z; x++ {
			for y := 0; y < 1<<z; y++ {
				u := "/tiles/stamen_toner_z3/" + strconv.Itoa(z) + "/" + strconv.Itoa(x) + "/" + strconv.Itoa(y) + ".png"
				reqs = append(reqs, httptest.NewRequest(http.MethodGet, u, nil))
			}
		}
	}
	runHits(b, r.Handler(), reqs, http.StatusOK)
}

// BenchmarkHandlerObjectHit: warm /o hits of a 64 KiB object through the
// role's whole handler, the cache on disk and in memory.
func BenchmarkHandlerObjectHit(b *testing.B) {
	for _, amnesia := range []bool{false, true} {
		b.Run("amnesia="+strconv.FormatBool(amnesia), func(b *testing.B) {
			obj := make([]byte, 64<<10)
			_, _ = rand.Read(obj)
			r := benchRole(b, amnesia, obj)
			req := httptest.NewRequest(http.MethodGet, "/o/"+store.Sum(obj).String(), nil)
			runHits(b, r.Handler(), []*http.Request{req}, http.StatusOK)
		})
	}
}
