package packs

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/ronhq/ron/roles/edge/mbtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// The pack rows of docs/edge.md §13: each archive is not mounted, is
// missing for readiness, and fails Open with the reader's error.
func TestBadPMTiles(t *testing.T) {
	good := archive(t, pyramid(2, 'g'), pmtilestest.Options{})
	patch := func(fn func(*pmtiles.Header)) []byte { return pmtilestest.PatchHeader(good, fn) }
	badMagic := append([]byte("PMTilez"), good[7:]...)
	h := pmtiles.Header{InternalCompression: pmtiles.CompressionNone, TileCompression: pmtiles.CompressionNone}
	longVarint := pmtilestest.Assemble(h, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, nil, nil, nil)
	for _, c := range []struct {
		name string
		b    []byte
		want error
	}{
		{"bad_magic", badMagic, pmtiles.ErrBadMagic},
		{"version_4", patch(func(h *pmtiles.Header) { h.Version = 4 }), pmtiles.ErrFutureVersion},
		{"zero_bytes", nil, pmtiles.ErrShort},
		{"section_past_eof", patch(func(h *pmtiles.Header) { h.TileDataLength += 1 }), pmtiles.ErrSection},
		{"tile_compression_5", patch(func(h *pmtiles.Header) { h.TileCompression = 5 }), pmtiles.ErrCompressionCode},
		{"varint_11_bytes", longVarint, pmtiles.ErrVarint},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeFile(t, dir, c.name+".pmtiles", c.b)
			writeFile(t, dir, "good.pmtiles", good)
			if _, err := Open(context.Background(), path, OpenOptions{}); !errors.Is(err, c.want) {
				t.Fatalf("Open: %v, want %v", err, c.want)
			}
			s := mountSet(t, Options{Dir: dir})
			if got := names(s); len(got) != 1 || got[0] != "good" {
				t.Fatalf("mounted %v", got)
			}
			if m := s.Missing(); len(m) != 1 || m[0] != "edge:pack:"+c.name {
				t.Fatalf("missing %v", m)
			}
		})
	}
}

// MBTiles without tiles or metadata, or failing quick_check, are not
// mounted (docs/edge.md §13); quick_check above quick_check_max_bytes runs only at full.
func TestBadMBTiles(t *testing.T) {
	dir := t.TempDir()
	const meta = `CREATE TABLE metadata (name TEXT, value TEXT)`
	const tiles = `CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB)`
	buildMBTiles(t, dir+"/no_tiles.mbtiles", meta)
	buildMBTiles(t, dir+"/no_metadata.mbtiles", tiles)
	corrupt := dir + "/corrupt.mbtiles"
	buildMBTiles(t, corrupt, `PRAGMA page_size=1024`, meta, tiles,
		`INSERT INTO metadata VALUES ('minzoom', '0'), ('maxzoom', '2'), ('format', 'png')`,
		`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < 99)
		 INSERT INTO tiles SELECT 2, i % 4, i / 4, randomblob(200) FROM n`)
	b, err := os.ReadFile(corrupt)
	if err != nil {
		t.Fatal(err)
	}
	if b[len(b)-1024] != 0x0d {
		t.Fatalf("last page type %#x", b[len(b)-1024])
	}
	b[len(b)-1024] = 0
	writeFile(t, dir, "corrupt.mbtiles", b)
	writeFile(t, dir, "not_sqlite.mbtiles", []byte("this is not an SQLite database at all"))
	for name, want := range map[string]error{"no_tiles": mbtiles.ErrSchema, "no_metadata": mbtiles.ErrSchema,
		"corrupt": mbtiles.ErrCorrupt, "not_sqlite": mbtiles.ErrNotSQLite} {
		if _, err := Open(context.Background(), dir+"/"+name+".mbtiles", OpenOptions{}); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	s := mountSet(t, Options{Dir: dir})
	want := []string{"edge:pack:corrupt", "edge:pack:no_metadata", "edge:pack:no_tiles", "edge:pack:not_sqlite"}
	if m := s.Missing(); len(names(s)) != 0 || len(m) != 4 || m[0] != want[0] || m[3] != want[3] {
		t.Fatalf("mounted %v, missing %v", names(s), m)
	}
	small := Options{Dir: dir, QuickCheckMaxBytes: 1024}
	if s := mountSet(t, small); len(names(s)) != 1 || names(s)[0] != "corrupt" {
		t.Fatalf("quick_check skipped at basic: mounted %v", names(s))
	}
	small.Verify = VerifyFull
	if s := mountSet(t, small); len(names(s)) != 0 {
		t.Fatalf("full level: mounted %v", names(s))
	}
}

// Leaf directories are checked at the full level only: an archive whose
// leaf points past the leaf section mounts under basic and fails under
// full.
func TestLeafPastSection(t *testing.T) {
	b := archive(t, pyramid(3, 'l'), pmtilestest.Options{InternalCompression: pmtiles.CompressionNone, LeafSize: 4})
	b = corruptLeaf(t, b)
	dir := t.TempDir()
	writeFile(t, dir, "leafy.pmtiles", b)
	if s := mountSet(t, Options{Dir: dir}); len(names(s)) != 1 {
		t.Fatalf("basic: %v %v", names(s), s.Status())
	}
	if s := mountSet(t, Options{Dir: dir, Verify: VerifyFull}); len(names(s)) != 0 || len(s.Missing()) != 1 {
		t.Fatalf("full: %v", names(s))
	}
}

// corruptLeaf overwrites the first leaf directory (uncompressed) with a
// directory of one entry whose tile lies far past the tile-data section.
func corruptLeaf(t testing.TB, b []byte) []byte {
	t.Helper()
	h, err := pmtiles.ParseHeader(b)
	if err != nil || h.LeafLength == 0 {
		t.Fatalf("no leaves: %v", err)
	}
	out := append([]byte(nil), b...)
	bad := pmtilestest.EncodeDirectory([]pmtiles.Entry{{TileID: 1, Offset: 1 << 40, Length: 1, RunLength: 1}})
	root, err := pmtiles.DecodeDirectory(b[h.RootOffset:h.RootOffset+h.RootLength], h.InternalCompression, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := root[0]
	if !first.IsLeaf() || uint64(len(bad)) > uint64(first.Length) {
		t.Fatalf("root entry %+v, bad leaf %d bytes", first, len(bad))
	}
	padded := make([]byte, first.Length)
	copy(padded, bad)
	// Trailing bytes after the last offset are corruption too; either way
	// the leaf no longer decodes to valid entries.
	copy(out[h.LeafOffset+first.Offset:], padded)
	return out
}
