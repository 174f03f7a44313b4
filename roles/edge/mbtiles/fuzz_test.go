package mbtiles

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fuzzBound bounds each fuzz input; it is an upper limit on a CPU-bound
// SQLite run, never a wait: a valid or invalid input finishes far sooner.
const fuzzBound = 5 * time.Second

// openErrs are the only errors Open may return for arbitrary bytes.
var openErrs = []error{ErrNotSQLite, ErrSchema, ErrCorrupt, ErrMetadataTooLarge, context.DeadlineExceeded}

// fuzzSeeds are small MBTiles databases (page size 512, a few pages each)
// of every schema Open knows. Coverage-guided fuzzing of SQLite files runs
// at its pace only with seeds this small: each execution writes, opens and
// reads the whole file under coverage instrumentation of the SQLite engine,
// and a 15–50 KiB fixture (the fixtures are replayed by the Open tests)
// cuts the rate tenfold and makes minimizing a finding take minutes.
var fuzzSeeds = [][]string{
	{createMeta, createTiles, metaZoom, `INSERT INTO tiles VALUES (0, 0, 0, x'89504e470d0a1a0a'), (1, 1, 0, x'1f8b0800')`},
	{createMeta, `CREATE TABLE tiles_with_hash (zoom_level integer, tile_column integer, tile_row integer, tile_data blob, tile_hash text)`,
		`CREATE VIEW tiles AS SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles_with_hash`,
		`INSERT INTO metadata VALUES ('format','pbf'), ('agg_tiles_hash','CAFE'), ('bounds','-1,-1,1,1'), ('center','0,0,1')`,
		`INSERT INTO tiles_with_hash VALUES (1, 0, 1, x'1a00', 'c4103f122d27677c9db144cae1394a66')`},
	{createMeta, createTiles, `INSERT INTO metadata VALUES ('json','{"vector_layers":[{"id":"a"}]}')`},
	{createTiles},
}

// FuzzOpen writes arbitrary bytes to a file and runs the header check, Open,
// and, when it mounts, every read path. Nothing may panic or hang, and Open
// fails only with this package's errors. Minimizing a SQLite input takes
// long under coverage instrumentation, so scripts/fuzz.sh caps it with
// -fuzzminimizetime=10x; so run, the target makes about 1,000 executions a
// second on 2 cores (each one a real file opened by SQLite).
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	for i, stmts := range fuzzSeeds {
		path := filepath.Join(dir, fmt.Sprintf("seed%d.mbtiles", i))
		buildDB(f, path, append([]string{"PRAGMA page_size = 512"}, stmts...)...)
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte(sqliteMagic))
	f.Add([]byte("SQLite format 3"))
	// One file per worker process, rewritten for every input.
	path := filepath.Join(dir, "f.mbtiles")
	f.Fuzz(func(t *testing.T, b []byte) {
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
