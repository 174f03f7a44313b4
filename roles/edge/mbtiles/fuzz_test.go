package mbtiles

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fuzzBound bounds each fuzz input; it is an upper limit on a CPU-bound
// SQLite run, never a wait: a valid or invalid input finishes far sooner.
const fuzzBound = 5 * time.Second

// fuzzSeedMax is the largest fixture used as a fuzz seed.
const fuzzSeedMax = 64 << 10

// openErrs are the only errors Open may return for arbitrary bytes.
var openErrs = []error{ErrNotSQLite, ErrSchema, ErrCorrupt, ErrMetadataTooLarge, context.DeadlineExceeded}

// FuzzOpen writes arbitrary bytes to a file and runs the header check, Open,
// and, when it mounts, every read path. Nothing may panic or hang, and Open
// fails only with this package's errors. Minimizing a large SQLite input
// takes long under coverage instrumentation, so fuzz with
// `-fuzzminimizetime=3s`.
func FuzzOpen(f *testing.F) {
	for _, fx := range fixtures {
		// The 477 KiB geography-class file would slow every mutation
		// down; the other fixtures cover the same code.
		if b, err := os.ReadFile(fixture(f, fx.file)); err == nil && len(b) <= fuzzSeedMax {
			f.Add(b)
		}
	}
	f.Add([]byte{})
	f.Add([]byte(sqliteMagic))
	f.Add([]byte("SQLite format 3"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "f.mbtiles")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if hdrErr := CheckHeader(b); hdrErr != nil {
			if _, err := Open(context.Background(), path, Options{}); !errors.Is(err, ErrNotSQLite) {
				t.Fatalf("header rejected (%v) but Open: %v", hdrErr, err)
			}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), fuzzBound)
		defer cancel()
		p, err := Open(ctx, path, Options{MaxConns: 1})
		if err != nil {
			for _, want := range openErrs {
				if errors.Is(err, want) {
					return
				}
			}
			t.Fatalf("Open: unexpected error %v", err)
		}
		defer p.Close()
		exercise(ctx, p)
	})
}

// exercise calls every read method of an open pack, ignoring errors.
func exercise(ctx context.Context, p *Pack) {
	for z := range uint32(3) {
		_, _, _ = p.Tile(ctx, z, 0, 0)
	}
	_, _ = p.Stats(ctx)
	_ = p.VerifyFull(ctx)
	_, _ = p.VectorLayers()
	_ = p.Bounds()
	_ = p.Center()
	_ = p.TileType().ContentType()
}

// FuzzParseGeo: bounds and center parsing never panic, and what they accept
// is inside the ranges they promise.
func FuzzParseGeo(f *testing.F) {
	for _, s := range []string{"-180,-85.0511,180,85.0511", "0,20,0", "1,2", "1e309,0,0,0", "NaN,1", ",,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if b, ok := ParseBounds(s); ok {
			if !(b.West <= b.East && b.South <= b.North && validLon(b.West) && validLon(b.East) &&
				validLat(b.South) && validLat(b.North)) {
				t.Fatalf("ParseBounds(%q) accepted %+v", s, b)
			}
		}
		if c, _, ok := ParseCenter(s); ok {
			if !validLon(c.Lon) || !validLat(c.Lat) || c.Zoom < 0 || c.Zoom > MaxZoom || math.IsNaN(c.Lon) {
				t.Fatalf("ParseCenter(%q) accepted %+v", s, c)
			}
		}
		_, _ = TypeFromFormat(s)
		_ = SniffType([]byte(s))
		_ = EncodingOf([]byte(s))
	})
}

// TestOpenEndlessView: a tiles view that never ends (a recursive CTE) and
// no minzoom/maxzoom, so Open's MIN/MAX scan would run forever: the ctx
// deadline interrupts the statement and Open returns the deadline error.
// The deadline bounds CPU-bound work; the outcome does not depend on it.
func TestOpenEndlessView(t *testing.T) {
	path := filepath.Join(t.TempDir(), "endless.mbtiles")
	buildDB(t, path, createMeta, `CREATE VIEW tiles AS
		WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n)
		SELECT 0 AS zoom_level, i AS tile_column, 0 AS tile_row, NULL AS tile_data FROM n`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	p, err := Open(ctx, path, Options{})
	if err == nil {
		p.Close()
		t.Fatal("Open succeeded on an endless view")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Open: %v; want context.DeadlineExceeded", err)
	}
}
