package tiles

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/ronhq/ron/httpx"
	testdata "github.com/ronhq/ron/internal/fixtures"
	"github.com/ronhq/ron/roles/edge/packs"
	"github.com/ronhq/ron/runtime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// copyFixture copies testdata/<kind>/<file> into dir.
func copyFixture(t testing.TB, dir, kind, file string) {
	t.Helper()
	writeFile(t, dir, file, testdata.Read(t, kind, file))
}

// writeFile writes b to dir/name.
func writeFile(t testing.TB, dir, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// env is a pack set over a temp folder and the handlers mounted on echo.
type env struct {
	dir   string
	set   *packs.Set
	tiles *Tiles
	e     *echo.Echo
	m     *runtime.Metrics
	s     Settings
	now   time.Time // zero: real time
}

// newEnv mounts the files of the temp folder prepared by fill and serves
// them with settings s.
func newEnv(t testing.TB, s Settings, fill func(dir string)) *env {
	t.Helper()
	ev := &env{dir: t.TempDir(), m: runtime.NewMetrics(nil), s: s}
	fill(ev.dir)
	ev.set = packs.NewSet(packs.Options{Dir: ev.dir, Metrics: ev.m, Log: zerolog.Nop()})
	if err := ev.set.Mount(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ev.set.Close)
	now := func() time.Time {
		if ev.now.IsZero() {
			return time.Now()
		}
		return ev.now
	}
	ev.tiles = New(Options{Packs: ev.set, Settings: func() Settings { return ev.s }, Metrics: ev.m,
		Log: zerolog.Nop(), Now: now})
	ev.e = echo.New()
	ev.e.HTTPErrorHandler = func(err error, c echo.Context) {
		if !c.Response().Committed {
			httpx.WriteError(c.Response(), "", err)
		}
	}
	read := []string{http.MethodGet, http.MethodHead}
	ev.e.Match(read, "/packs", ev.tiles.ServePacks)
	ev.e.Match(read, "/packs/*", ev.tiles.ServePacks)
	ev.e.Match(read, "/tiles/*", ev.tiles.ServeTiles)
	return ev
}

// fixtures returns a fill function copying the named fixtures (the kind
// from the extension).
func fixtures(t testing.TB, files ...string) func(string) {
	return func(dir string) {
		for _, f := range files {
			kind := "pmtiles"
			if filepath.Ext(f) == ".mbtiles" {
				kind = "mbtiles"
			}
			copyFixture(t, dir, kind, f)
		}
	}
}

// req builds a request; hdr holds name, value pairs.
func req(method, target string, hdr ...string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	return r
}

// do serves one request.
func (ev *env) do(r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	ev.e.ServeHTTP(w, r)
	return w
}

// get serves GET target with the header pairs.
func (ev *env) get(target string, hdr ...string) *httptest.ResponseRecorder {
	return ev.do(req(http.MethodGet, target, hdr...))
}

// pack returns a mounted pack (released at cleanup).
func (ev *env) pack(t testing.TB, name string) *packs.Pack {
	t.Helper()
	p, release, ok := ev.set.Acquire(name)
	if !ok {
		t.Fatalf("pack %q not mounted (%v)", name, ev.set.Status())
	}
	t.Cleanup(release)
	return p
}

// envelope decodes an error envelope.
func envelope(t testing.TB, w *httptest.ResponseRecorder) *httpx.Error {
	t.Helper()
	var env httpx.Envelope
	if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || env.Error == nil {
		t.Fatalf("not an envelope (%d): %q", w.Code, w.Body.String())
	}
	return env.Error
}

// counter reads a counter's value from the metrics set.
func (ev *env) counter(name string, labels ...string) uint64 {
	return ev.m.Counter(name, labels...).Get()
}

// readAll reads a file.
func readAll(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
