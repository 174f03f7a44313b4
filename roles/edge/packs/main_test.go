package packs

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"
	_ "modernc.org/sqlite"

	"github.com/ronhq/ron/internal/fixtures"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
	"github.com/ronhq/ron/runtime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixtureDir is testdata/<kind>.
func fixtureDir(t testing.TB, kind string) string {
	t.Helper()
	return filepath.Join(fixtures.Dir(t), kind)
}

// copyFixture copies a testdata fixture into dir under name.
func copyFixture(t testing.TB, kind, file, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir(t, kind), file))
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, name, b)
}

// writeFile writes b to dir/name (mode 0644) and returns the path.
func writeFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// replaceFile writes b under a temporary name in path's folder and renames
// it over path (a new inode), the way operators are told to.
func replaceFile(t testing.TB, path string, b []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// rewriteInPlace overwrites path's bytes keeping its inode, and moves its
// mtime to mtime so the change is visible whatever the clock granularity.
func rewriteInPlace(t testing.TB, path string, b []byte, mtime time.Time) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// pyramid is every tile of zooms 0..maxZ, each naming its coordinates
// and tagged with tag.
func pyramid(maxZ uint32, tag byte) []pmtilestest.Tile {
	var ts []pmtilestest.Tile
	for z := uint32(0); z <= maxZ; z++ {
		for x := uint32(0); x < 1<<z; x++ {
			for y := uint32(0); y < 1<<z; y++ {
				ts = append(ts, pmtilestest.Tile{Z: z, X: x, Y: y, Data: []byte{byte(z), byte(x), byte(y), tag}})
			}
		}
	}
	return ts
}

// archive builds a PMTiles archive.
func archive(t testing.TB, tiles []pmtilestest.Tile, opt pmtilestest.Options) []byte {
	t.Helper()
	b, err := pmtilestest.Build(tiles, opt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newTestSet returns a Set over opt with a private metrics set and a
// silent logger, closed at cleanup.
func newTestSet(t testing.TB, opt Options) *Set {
	t.Helper()
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	opt.Log = zerolog.Nop()
	s := NewSet(opt)
	t.Cleanup(s.Close)
	return s
}

// mountSet builds a Set and mounts it.
func mountSet(t testing.TB, opt Options) *Set {
	t.Helper()
	s := newTestSet(t, opt)
	if err := s.Mount(context.Background()); err != nil {
		t.Fatalf("Mount: %v", err)
	}
	return s
}

// names lists the mounted pack names.
func names(s *Set) []string {
	var out []string
	for _, p := range s.List() {
		out = append(out, p.Name())
	}
	return out
}

// metric reads one series of s's metrics (0 when absent).
func metric(s *Set, series string) float64 { return s.m.Values()[series] }

// buildMBTiles creates an MBTiles file at path by running stmts.
func buildMBTiles(t testing.TB, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, st := range stmts {
		if _, err := db.Exec(st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
}

// tileBytes reads tile (z, x, y) of the mounted pack name.
func tileBytes(t testing.TB, s *Set, name string, z, x, y uint32) []byte {
	t.Helper()
	p, release, ok := s.Acquire(name)
	if !ok {
		t.Fatalf("%s not mounted", name)
	}
	defer release()
	tl, err := p.Tile(context.Background(), z, x, y)
	if err != nil || !tl.Found {
		t.Fatalf("%s %d/%d/%d: %+v %v", name, z, x, y, tl, err)
	}
	return bytes.Clone(tl.Data)
}

// fileMtime is path's mtime.
func fileMtime(t testing.TB, path string) time.Time {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}

// chtimes sets path's atime and mtime to mtime.
func chtimes(path string, mtime time.Time) error { return os.Chtimes(path, mtime, mtime) }
