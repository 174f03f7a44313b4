package mbtiles

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Schema statements shared by the built files.
const (
	createMeta  = `CREATE TABLE metadata (name text, value text)`
	createTiles = `CREATE TABLE tiles (zoom_level integer, tile_column integer, tile_row integer, tile_data blob)`
	metaZoom    = `INSERT INTO metadata VALUES ('minzoom','0'), ('maxzoom','2'), ('format','png')`
)

// writeFile writes b to a new file in dir and returns its path.
func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// fileHead returns the first n bytes of a fixture.
func fileHead(t *testing.T, name string, n int) []byte {
	t.Helper()
	b, err := os.ReadFile(fixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return b[:n]
}

// corruptLastPage builds a file whose tiles b-tree has a leaf page with an
// invalid page type, so only quick_check (or reading that page) notices.
func corruptLastPage(t *testing.T, path string) {
	t.Helper()
	buildDB(t, path, `PRAGMA page_size=1024`, createMeta, metaZoom, createTiles,
		`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < 99)
		 INSERT INTO tiles SELECT 2, i % 4, i / 4, randomblob(200) FROM n`)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const pageSize = 1024
	last := len(b) - pageSize
	if b[last] != 0x0d {
		t.Fatalf("last page type %#x, want a table leaf (0x0d)", b[last])
	}
	b[last] = 0x00
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestOpenMalformed(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name  string
		build func(t *testing.T) string
		opt   Options
		want  error
	}{
		{"zero-byte file", func(t *testing.T) string { return writeFile(t, dir, "zero.mbtiles", nil) }, Options{}, ErrNotSQLite},
		{"not SQLite", func(t *testing.T) string {
			return writeFile(t, dir, "text.mbtiles", []byte("this is a text file, not a database at all"))
		}, Options{}, ErrNotSQLite},
		{"truncated header", func(t *testing.T) string {
			return writeFile(t, dir, "short.mbtiles", []byte("SQLite for"))
		}, Options{}, ErrNotSQLite},
		{"header without NUL", func(t *testing.T) string {
			return writeFile(t, dir, "nonul.mbtiles", []byte("SQLite format 3 and more bytes"))
		}, Options{}, ErrNotSQLite},
		{"header only", func(t *testing.T) string {
			return writeFile(t, dir, "header.mbtiles", []byte(sqliteMagic))
		}, Options{}, ErrCorrupt},
		{"truncated after 100 bytes", func(t *testing.T) string {
			return writeFile(t, dir, "trunc100.mbtiles", fileHead(t, "world_cities.mbtiles", 100))
		}, Options{}, ErrCorrupt},
		{"truncated mid-file", func(t *testing.T) string {
			return writeFile(t, dir, "trunchalf.mbtiles", fileHead(t, "world_cities.mbtiles", 24576))
		}, Options{}, ErrCorrupt},
		{"directory", func(t *testing.T) string {
			p := filepath.Join(dir, "adir.mbtiles")
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
			return p
		}, Options{}, ErrNotSQLite},
		{"missing file", func(t *testing.T) string { return filepath.Join(dir, "nope.mbtiles") }, Options{}, fs.ErrNotExist},
		{"no tables", func(t *testing.T) string {
			p := filepath.Join(dir, "empty.mbtiles")
			buildDB(t, p, `PRAGMA user_version=1`)
			return p
		}, Options{}, ErrSchema},
		{"no tiles table", func(t *testing.T) string {
			p := filepath.Join(dir, "notiles.mbtiles")
			buildDB(t, p, createMeta, metaZoom)
			return p
		}, Options{}, ErrSchema},
		{"no metadata", func(t *testing.T) string {
			p := filepath.Join(dir, "nometa.mbtiles")
			buildDB(t, p, createTiles)
			return p
		}, Options{}, ErrSchema},
		{"wrong tiles columns", func(t *testing.T) string {
			p := filepath.Join(dir, "wrongcols.mbtiles")
			buildDB(t, p, createMeta, `CREATE TABLE tiles (z integer, x integer, y integer, data blob)`)
			return p
		}, Options{}, ErrSchema},
		{"tile_data missing", func(t *testing.T) string {
			p := filepath.Join(dir, "nodata.mbtiles")
			buildDB(t, p, createMeta, `CREATE TABLE tiles (zoom_level integer, tile_column integer, tile_row integer)`)
			return p
		}, Options{}, ErrSchema},
		{"wrong metadata columns", func(t *testing.T) string {
			p := filepath.Join(dir, "wrongmeta.mbtiles")
			buildDB(t, p, `CREATE TABLE metadata (key text, val text)`, createTiles)
			return p
		}, Options{}, ErrSchema},
		{"tiles is an index name", func(t *testing.T) string {
			p := filepath.Join(dir, "index.mbtiles")
			buildDB(t, p, createMeta, `CREATE TABLE t (zoom_level, tile_column, tile_row, tile_data)`,
				`CREATE INDEX tiles ON t (zoom_level)`)
			return p
		}, Options{}, ErrSchema},
		{"tiles view over a dropped table", func(t *testing.T) string {
			p := filepath.Join(dir, "brokenview.mbtiles")
			buildDB(t, p, createMeta, `CREATE TABLE m (zoom_level, tile_column, tile_row, tile_data)`,
				`CREATE VIEW tiles AS SELECT * FROM m`, `PRAGMA legacy_alter_table=ON`, `DROP TABLE m`)
			return p
		}, Options{}, ErrSchema},
		{"corrupted page", func(t *testing.T) string {
			p := filepath.Join(dir, "corrupt.mbtiles")
			corruptLastPage(t, p)
			return p
		}, Options{}, ErrCorrupt},
		{"metadata too large", func(t *testing.T) string {
			p := filepath.Join(dir, "bigmeta.mbtiles")
			buildDB(t, p, createMeta, createTiles, `INSERT INTO metadata VALUES ('json', hex(randomblob(600)))`)
			return p
		}, Options{MetadataMaxBytes: 1000}, ErrMetadataTooLarge},
		{"invalid fixture", func(t *testing.T) string { return fixture(t, "invalid.mbtiles") }, Options{}, ErrSchema},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Open(context.Background(), c.build(t), c.opt)
			if err == nil {
				p.Close()
				t.Fatalf("Open succeeded, want %v", c.want)
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("Open: %v; want %v", err, c.want)
			}
			t.Log(err)
		})
	}
}

// TestQuickCheckSize: quick_check runs at Open only up to
// QuickCheckMaxBytes; VerifyFull runs it whatever the size.
func TestQuickCheckSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "corrupt.mbtiles")
	corruptLastPage(t, path)
	for _, max := range []int64{1, -1} {
		p := openT(t, path, Options{QuickCheckMaxBytes: max})
		if err := p.VerifyFull(context.Background()); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("QuickCheckMaxBytes %d: VerifyFull: %v; want ErrCorrupt", max, err)
		}
	}
}

// TestOpenCanceled: a context that has ended stops Open.
func TestOpenCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, fixture(t, "world_cities.mbtiles"), Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Open: %v; want context.Canceled", err)
	}
}
