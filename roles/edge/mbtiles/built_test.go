package mbtiles

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// md5hex is the lower-case hex MD5 of s.
func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// buildPack builds a file from stmts in a temp dir and opens it.
func buildPack(t *testing.T, name string, stmts ...string) *Pack {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	buildDB(t, path, stmts...)
	return openT(t, path, Options{})
}

func TestTypeFromMetadataOrSniff(t *testing.T) {
	cases := []struct {
		name   string
		format string // "-" = no format row
		tile   string // SQL blob literal, "" = no tile
		want   TileType
	}{
		{"format pbf", "pbf", "", TypeMVT},
		{"format mvt upper, spaces", " MVT ", "", TypeMVT},
		{"format jpg", "jpg", "", TypeJPEG},
		{"format jpeg", "jpeg", "", TypeJPEG},
		{"format avif", "avif", "", TypeAVIF},
		{"format mlt", "mlt", "", TypeMLT},
		{"format webp", "webp", "", TypeWebP},
		{"format json", "json", "", TypeJSON},
		{"format tiff", "tiff", "x'89504E47'", TypeUnknown},
		{"empty format sniffs", "", "x'89504E470D0A1A0A'", TypePNG},
		{"sniff png", "-", "x'89504E470D0A1A0A'", TypePNG},
		{"sniff jpeg", "-", "x'FFD8FFE000'", TypeJPEG},
		{"sniff webp", "-", "x'524946463A2D000057454250565038'", TypeWebP},
		{"sniff riff not webp", "-", "x'5249464600000000415649204C495354'", TypeUnknown},
		{"sniff gzip", "-", "x'1F8B0800'", TypeMVT},
		{"sniff raw mvt", "-", "x'1AA10E78'", TypeUnknown},
		{"sniff no tile", "-", "", TypeUnknown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stmts := []string{createMeta, createTiles}
			if c.format != "-" {
				stmts = append(stmts, `INSERT INTO metadata VALUES ('format', '`+c.format+`')`)
			}
			if c.tile != "" {
				stmts = append(stmts, `INSERT INTO tiles VALUES (0, 0, 0, NULL)`,
					`INSERT INTO tiles VALUES (0, 0, 0, `+c.tile+`)`)
			}
			if got := buildPack(t, "t.mbtiles", stmts...).TileType(); got != c.want {
				t.Fatalf("TileType = %v, want %v", got, c.want)
			}
		})
	}
}

func TestZoomRange(t *testing.T) {
	tiles := `INSERT INTO tiles VALUES (3, 0, 0, x'00'), (5, 0, 0, x'00')`
	cases := []struct {
		name     string
		meta     string // values for INSERT INTO metadata, "" = none
		tiles    bool
		min, max int
	}{
		{"metadata", `('minzoom','1'), ('maxzoom','9')`, true, 1, 9},
		{"metadata with spaces", `('minzoom',' 2 '), ('maxzoom',' 4')`, true, 2, 4},
		{"integer-typed metadata", `('minzoom', 0), ('maxzoom', 7)`, true, 0, 7},
		{"none: from data", ``, true, 3, 5},
		{"only minzoom", `('minzoom','0')`, true, 0, 5},
		{"only maxzoom", `('maxzoom','12')`, true, 3, 12},
		{"invalid text", `('minzoom','abc'), ('maxzoom','6.5')`, true, 3, 5},
		{"out of range", `('minzoom','-1'), ('maxzoom','32')`, true, 3, 5},
		{"min above max", `('minzoom','8'), ('maxzoom','2')`, true, 3, 5},
		{"only min, above data", `('minzoom','9')`, true, 3, 5},
		{"no metadata, no tiles", ``, false, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stmts := []string{createMeta, createTiles}
			if c.meta != "" {
				stmts = append(stmts, `INSERT INTO metadata VALUES `+c.meta)
			}
			if c.tiles {
				stmts = append(stmts, tiles)
			}
			p := buildPack(t, "z.mbtiles", stmts...)
			if p.MinZoom() != c.min || p.MaxZoom() != c.max {
				t.Fatalf("zoom %d–%d, want %d–%d", p.MinZoom(), p.MaxZoom(), c.min, c.max)
			}
		})
	}
}

func TestTileDataKinds(t *testing.T) {
	p := buildPack(t, "kinds.mbtiles", createMeta, createTiles,
		`INSERT INTO metadata VALUES ('minzoom','0'), ('maxzoom','1')`,
		`INSERT INTO tiles VALUES (1, 0, 1, NULL), (1, 1, 1, x''), (1, 0, 0, 'text tile'), (1, 1, 0, 42)`)
	ctx := context.Background()
	if _, found, err := p.Tile(ctx, 1, 0, 0); found || err != nil {
		t.Errorf("NULL tile: %v, %v; want absent", found, err)
	}
	if d, found, err := p.Tile(ctx, 1, 1, 0); !found || err != nil || len(d) != 0 {
		t.Errorf("empty blob: %q, %v, %v; want found, empty", d, found, err)
	}
	if d, found, err := p.Tile(ctx, 1, 0, 1); !found || err != nil || string(d) != "text tile" {
		t.Errorf("text tile: %q, %v, %v", d, found, err)
	}
	if _, _, err := p.Tile(ctx, 1, 1, 1); !errors.Is(err, ErrSchema) {
		t.Errorf("integer tile_data: %v; want ErrSchema", err)
	}
}

func TestFullVerification(t *testing.T) {
	withHash := []string{createMeta,
		`CREATE TABLE tiles_with_hash (zoom_level integer, tile_column integer, tile_row integer, tile_data blob, tile_hash text)`,
		`CREATE VIEW tiles AS SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles_with_hash`}
	cases := []struct {
		name  string
		stmts []string
		want  error
	}{
		{"lower-case tile_hash", append(withHash,
			`INSERT INTO tiles_with_hash VALUES (0,0,0,x'68656c6c6f','5d41402abc4b2a76b9719d911017c592')`), nil},
		{"wrong tile_hash", append(withHash,
			`INSERT INTO tiles_with_hash VALUES (0,0,0,x'68656c6c6f','00000000000000000000000000000000')`), ErrHashMismatch},
		{"agg hash lower case", append(withHash,
			`INSERT INTO tiles_with_hash VALUES (0,0,0,x'68656c6c6f','5D41402ABC4B2A76B9719D911017C592')`,
			// md5("000hello")
			`INSERT INTO metadata VALUES ('agg_tiles_hash', '`+md5hex("000hello")+`')`), nil},
		{"agg hash wrong", append([]string{createMeta, createTiles},
			`INSERT INTO tiles VALUES (0,0,0,x'68656c6c6f')`,
			`INSERT INTO metadata VALUES ('agg_tiles_hash', '`+md5hex("000hellO")+`')`), ErrHashMismatch},
		{"agg hash of no tiles", append([]string{createMeta, createTiles},
			`INSERT INTO metadata VALUES ('agg_tiles_hash', '`+md5hex("")+`')`), nil},
		{"agg hash order and NULL", append([]string{createMeta, createTiles},
			`INSERT INTO tiles VALUES (1,1,0,x'62'), (1,0,1,NULL), (0,0,0,x'61')`,
			`INSERT INTO metadata VALUES ('agg_tiles_hash', '`+md5hex("000a101110b")+`')`), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := buildPack(t, "h.mbtiles", c.stmts...)
			if err := p.VerifyFull(context.Background()); !errors.Is(err, c.want) {
				t.Fatalf("VerifyFull: %v; want %v", err, c.want)
			}
		})
	}
}

// TestOddFiles: upper-case names, a WAL-mode file and a path needing URI
// escapes all open.
func TestOddFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir?with#odd%chars")
	cases := []struct {
		name  string
		stmts []string
	}{
		{"UPPER.mbtiles", []string{`CREATE TABLE METADATA (NAME text, VALUE text)`,
			`CREATE TABLE TILES (ZOOM_LEVEL integer, TILE_COLUMN integer, TILE_ROW integer, TILE_DATA blob)`,
			`INSERT INTO TILES VALUES (0,0,0,x'1f8b00')`}},
		{"wal.mbtiles", []string{`PRAGMA journal_mode=WAL`, createMeta, createTiles,
			`INSERT INTO tiles VALUES (0,0,0,x'1f8b00')`, `PRAGMA wal_checkpoint(TRUNCATE)`}},
		{"q?x#y%25z.mbtiles", []string{createMeta, createTiles, `INSERT INTO tiles VALUES (0,0,0,x'1f8b00')`}},
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name)
			buildDB(t, path, c.stmts...)
			if head := readPrefix(t, path, 20); c.name == "wal.mbtiles" && head[18] != 2 {
				t.Fatalf("file format version %d, want 2 (WAL)", head[18])
			}
			p := openT(t, path, Options{})
			d, found, err := p.Tile(context.Background(), 0, 0, 0)
			if err != nil || !found || EncodingOf(d) != EncodingGzip || p.TileType() != TypeMVT {
				t.Fatalf("Tile: %x, %v, %v, type %v", d, found, err, p.TileType())
			}
		})
	}
}

// readPrefix returns the first n bytes of the file at path.
func readPrefix(t *testing.T, path string, n int) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || len(b) < n {
		t.Fatalf("read %s: %d bytes, %v", path, len(b), err)
	}
	return b[:n]
}

func TestMetadataRows(t *testing.T) {
	p := buildPack(t, "m.mbtiles", createMeta, createTiles,
		`INSERT INTO metadata VALUES (NULL, 'orphan'), ('name', 'first'), ('name', 'second'),
			('empty', NULL), ('num', 12), ('blob', x'6869')`)
	want := map[string]string{"name": "first", "empty": "", "num": "12", "blob": "hi"}
	got := p.Metadata()
	if len(got) != len(want) {
		t.Fatalf("Metadata = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Metadata[%q] = %q, want %q", k, got[k], v)
		}
	}
}
