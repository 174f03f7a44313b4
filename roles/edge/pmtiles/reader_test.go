package pmtiles_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// runTiles is a pyramid to zoom 4 where the left half of zoom 4 is one
// repeated "ocean" tile, so the archive has runs and deduplicated blobs.
func runTiles() []pmtilestest.Tile {
	ts := pyramid(4)
	for i := range ts {
		if ts[i].Z == 4 && ts[i].X < 8 {
			ts[i].Data = []byte("ocean")
		}
	}
	return ts
}

// checkAllTiles looks every tile up and compares its bytes; the zoom above
// the highest tile, and zoom 12, must be absent.
func checkAllTiles(t *testing.T, r *pmtiles.Reader, tiles []pmtilestest.Tile) {
	t.Helper()
	ctx := context.Background()
	var maxZ uint32
	for _, tl := range tiles {
		maxZ = max(maxZ, tl.Z)
		ref, ok, err := r.Tile(ctx, tl.Z, tl.X, tl.Y)
		if err != nil || !ok {
			t.Fatalf("%d/%d/%d: %v %v", tl.Z, tl.X, tl.Y, ok, err)
		}
		if got, err := r.ReadTile(ctx, ref); err != nil || !bytes.Equal(got, tl.Data) {
			t.Fatalf("%d/%d/%d: %q, %v", tl.Z, tl.X, tl.Y, got, err)
		}
	}
	top := uint32(1)<<(maxZ+1) - 1
	for _, c := range [][3]uint32{{maxZ + 1, 0, 0}, {maxZ + 1, top, top}, {12, 3423, 1763}} {
		if _, ok, err := r.Tile(ctx, c[0], c[1], c[2]); ok || err != nil {
			t.Fatalf("%v: %v %v", c, ok, err)
		}
	}
}

// Archives with 0–3 levels of leaf directories under every internal
// compression: every tile is found, VerifyFull passes, Entries sees every
// tile entry once.
func TestLeafArchives(t *testing.T) {
	tiles := runTiles()
	for _, ic := range []pmtiles.Compression{pmtiles.CompressionNone, pmtiles.CompressionGzip, pmtiles.CompressionBrotli, pmtiles.CompressionZstd} {
		for levels := 0; levels <= pmtiles.MaxLeafLevels; levels++ {
			t.Run(fmt.Sprintf("%s/%d", ic, levels), func(t *testing.T) {
				opt := pmtilestest.Options{InternalCompression: ic, TileType: pmtiles.TileTypePNG}
				if levels > 0 {
					opt.LeafSize, opt.LeafLevels = 4, levels
				}
				b := mustBuild(t, tiles, opt)
				r := mustOpen(t, b, pmtiles.Options{})
				if h := r.Header(); h.InternalCompression != ic || (levels > 0) != (h.LeafLength > 0) || h.MaxZoom != 4 {
					t.Fatalf("header %+v", h)
				}
				checkAllTiles(t, r, tiles)
				if err := r.VerifyFull(context.Background()); err != nil {
					t.Fatal(err)
				}
				var addressed uint64
				n := 0
				_ = r.Entries(context.Background(), func(e pmtiles.Entry) error { n++; addressed += uint64(e.RunLength); return nil })
				if h := r.Header(); uint64(n) != h.TileEntries || addressed != uint64(len(tiles)) || h.AddressedTiles != addressed {
					t.Fatalf("%d entries (header %d), %d addressed of %d", n, h.TileEntries, addressed, len(tiles))
				}
			})
		}
	}
}

// Every tile type and every tile compression the writer can produce: the
// header says so and the stored bytes decode to the tile.
func TestTileTypesAndCompressions(t *testing.T) {
	comps := []pmtiles.Compression{pmtiles.CompressionUnknown, pmtiles.CompressionNone, pmtiles.CompressionGzip, pmtiles.CompressionBrotli, pmtiles.CompressionZstd}
	type combo struct {
		tt pmtiles.TileType
		tc pmtiles.Compression
	}
	var combos []combo
	for tt := pmtiles.TileTypeUnknown; tt <= pmtiles.TileTypeMLT; tt++ {
		combos = append(combos, combo{tt, comps[int(tt)%len(comps)]})
	}
	for _, tc := range comps {
		combos = append(combos, combo{pmtiles.TileTypeMVT, tc})
	}
	for _, c := range combos {
		tiles := pyramid(2)
		b := mustBuild(t, tiles, pmtilestest.Options{TileType: c.tt, TileCompression: c.tc, CompressTiles: c.tc != 0, LeafSize: 5})
		r := mustOpen(t, b, pmtiles.Options{})
		if h := r.Header(); h.TileType != c.tt || h.TileCompression != c.tc {
			t.Fatalf("%+v: header %+v", c, h)
		}
		ref, ok, err := r.Tile(context.Background(), 2, 3, 1)
		if err != nil || !ok {
			t.Fatalf("%+v: %v %v", c, ok, err)
		}
		stored, _ := r.ReadTile(context.Background(), ref)
		plain := stored
		if c.tc != pmtiles.CompressionUnknown {
			d, err := pmtiles.Codecs(nil).NewReader(c.tc, bytes.NewReader(stored))
			if err != nil {
				t.Fatal(err)
			}
			plain, _ = io.ReadAll(d)
			d.Close()
		}
		if !bytes.Equal(plain, tileData(2, 3, 1)) {
			t.Fatalf("%+v: %q", c, plain)
		}
	}
}

// rawArchive assembles an archive with internal compression none from raw
// directory entries, so tests can write any structure.
func rawArchive(root []pmtiles.Entry, leaves []byte, data []byte, meta string) []byte {
	h := pmtiles.Header{InternalCompression: pmtiles.CompressionNone, TileCompression: pmtiles.CompressionNone,
		TileType: pmtiles.TileTypePNG, MaxZoom: 3}
	return pmtilestest.Assemble(h, pmtilestest.EncodeDirectory(root), []byte(meta), leaves, data)
}

func tileEntry(id, off uint64, n uint32) pmtiles.Entry {
	return pmtiles.Entry{TileID: id, Offset: off, Length: n, RunLength: 1}
}

func leafEntry(id, off uint64, n int) pmtiles.Entry {
	return pmtiles.Entry{TileID: id, Offset: off, Length: uint32(n)}
}

// The PMTiles row of docs/edge.md §13 and the other basic-level checks:
// each archive fails Open with the right error.
func TestOpenMalformed(t *testing.T) {
	good := mustBuild(t, pyramid(2), pmtilestest.Options{LeafSize: 4})
	patch := func(f func(*pmtiles.Header)) []byte { return pmtilestest.PatchHeader(good, f) }
	leaf := pmtilestest.EncodeDirectory([]pmtiles.Entry{tileEntry(0, 0, 5)})
	eleven := []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}
	rootWith := func(root []byte) []byte {
		h := pmtiles.Header{InternalCompression: pmtiles.CompressionNone, MaxZoom: 3}
		return pmtilestest.Assemble(h, root, nil, nil, []byte("tiles"))
	}
	for _, c := range []struct {
		name string
		b    []byte
		want error
	}{
		{"0 bytes", nil, pmtiles.ErrShort},
		{"header only, truncated", good[:100], pmtiles.ErrShort},
		{"bad magic", append([]byte("XMTiles"), good[7:]...), pmtiles.ErrBadMagic},
		{"version 4", patch(func(h *pmtiles.Header) { h.Version = 4 }), pmtiles.ErrFutureVersion},
		{"section past EOF", good[:len(good)-1], pmtiles.ErrSection},
		{"metadata past EOF", patch(func(h *pmtiles.Header) { h.MetadataOffset = uint64(len(good)) }), pmtiles.ErrSection},
		{"tile compression 5", patch(func(h *pmtiles.Header) { h.TileCompression = 5 }), pmtiles.ErrCompressionCode},
		{"max zoom 32", patch(func(h *pmtiles.Header) { h.MaxZoom = 32 }), pmtiles.ErrZoom},
		{"11-byte varint in the root", rootWith(append(eleven, 0, 0, 0, 0)), pmtiles.ErrVarint},
		{"offset 0 on the first root entry", rootWith([]byte{1, 0, 1, 5, 0}), pmtiles.ErrCorrupt},
		{"trailing bytes after the root", rootWith([]byte{1, 0, 1, 5, 1, 7}), pmtiles.ErrCorrupt},
		{"empty root section", rootWith(nil), pmtiles.ErrVarint},
		{"root leaf past the leaf section", rawArchive([]pmtiles.Entry{leafEntry(0, 1, len(leaf))}, leaf, []byte("tiles"), "{}"), pmtiles.ErrCorrupt},
		{"root tile past tile data", rawArchive([]pmtiles.Entry{tileEntry(0, 1, 5)}, nil, []byte("tiles"), "{}"), pmtiles.ErrCorrupt},
		{"root garbage gzip", patch(func(h *pmtiles.Header) { h.InternalCompression = pmtiles.CompressionBrotli }), pmtiles.ErrCorrupt},
		{"metadata not JSON", rawArchive(nil, nil, nil, "{nope"), pmtiles.ErrCorrupt},
		{"metadata an array", rawArchive(nil, nil, nil, "[1]"), pmtiles.ErrCorrupt},
		{"metadata null", rawArchive(nil, nil, nil, "null"), pmtiles.ErrCorrupt},
		{"metadata not UTF-8", rawArchive(nil, nil, nil, "{\"a\":\"\xff\"}"), pmtiles.ErrCorrupt},
	} {
		_, err := openBytes(t, c.b, pmtiles.Options{})
		if !errors.Is(err, c.want) || !errors.Is(err, pmtiles.ErrInvalid) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// Corruption below the root is found while serving (Open passes, the
// lookup fails with ErrCorrupt) and by VerifyFull.
func TestServingCorruption(t *testing.T) {
	data := []byte("tiles")
	inner := pmtilestest.EncodeDirectory([]pmtiles.Entry{tileEntry(0, 0, 5)})
	past := pmtilestest.EncodeDirectory([]pmtiles.Entry{leafEntry(0, 1000, 5)})
	farTile := pmtilestest.EncodeDirectory([]pmtiles.Entry{tileEntry(0, 0, 100)})
	for _, c := range []struct {
		name   string
		leaves []byte
		root   []pmtiles.Entry
		want   error
	}{
		{"level-2 leaf past the leaf section", append(append([]byte{}, inner...), past...),
			[]pmtiles.Entry{leafEntry(0, uint64(len(inner)), len(past))}, pmtiles.ErrCorrupt},
		{"leaf tile past tile data", farTile, []pmtiles.Entry{leafEntry(0, 0, len(farTile))}, pmtiles.ErrCorrupt},
		{"empty leaf", []byte{0}, []pmtiles.Entry{leafEntry(0, 0, 1)}, pmtiles.ErrCorrupt},
		{"11-byte varint in a leaf", []byte{1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 1, 5, 1},
			[]pmtiles.Entry{leafEntry(0, 0, 15)}, pmtiles.ErrVarint},
	} {
		r := mustOpen(t, rawArchive(c.root, c.leaves, data, "{}"), pmtiles.Options{})
		if _, _, err := r.Tile(context.Background(), 0, 0, 0); !errors.Is(err, c.want) {
			t.Errorf("%s: Tile: %v", c.name, err)
		}
		if err := r.VerifyFull(context.Background()); !errors.Is(err, c.want) {
			t.Errorf("%s: VerifyFull: %v", c.name, err)
		}
	}
}

// More than 3 levels of leaves: from the writer (4 levels) and from a leaf
// that points to itself; Open passes, lookups and VerifyFull fail with
// ErrDepth. Exactly 3 levels pass (TestLeafArchives).
func TestTooDeep(t *testing.T) {
	deep := mustBuild(t, pyramid(3), pmtilestest.Options{LeafSize: 2, LeafLevels: 4})
	self := pmtilestest.EncodeDirectory([]pmtiles.Entry{leafEntry(0, 0, 5)}) // 5 bytes: points to itself
	loop := rawArchive([]pmtiles.Entry{leafEntry(0, 0, len(self))}, self, []byte("tiles"), "{}")
	for name, b := range map[string][]byte{"4 levels": deep, "self loop": loop} {
		r := mustOpen(t, b, pmtiles.Options{})
		if _, _, err := r.Tile(context.Background(), 0, 0, 0); !errors.Is(err, pmtiles.ErrDepth) || !errors.Is(err, pmtiles.ErrCorrupt) {
			t.Errorf("%s: Tile: %v", name, err)
		}
		if err := r.VerifyFull(context.Background()); !errors.Is(err, pmtiles.ErrDepth) {
			t.Errorf("%s: VerifyFull: %v", name, err)
		}
	}
}

// Metadata of length 0 reads as {}; a root ending beyond 16 KiB opens with
// a warning.
func TestMetadataAndWarnings(t *testing.T) {
	r := mustOpen(t, mustBuild(t, pyramid(1), pmtilestest.Options{Metadata: []byte{}}), pmtiles.Options{})
	if string(r.Metadata()) != "{}" || r.Header().MetadataLength != 0 {
		t.Fatalf("metadata %q", r.Metadata())
	}
	meta := `{"name":"n","vector_layers":[]}`
	b := mustBuild(t, pyramid(6), pmtilestest.Options{InternalCompression: pmtiles.CompressionNone, Metadata: []byte(meta)})
	r = mustOpen(t, b, pmtiles.Options{})
	if string(r.Metadata()) != meta {
		t.Fatalf("metadata %q", r.Metadata())
	}
	if r.Header().RootInFirst16K() || len(r.Warnings()) != 1 {
		t.Fatalf("root length %d, warnings %v", r.Header().RootLength, r.Warnings())
	}
	checkAllTiles(t, r, pyramid(6))
}

// zstd internal compression decodes with the built-in decoder; an override
// in Options.Codecs replaces it (here a stand-in that is gzip underneath,
// which the real zstd decoder would refuse).
func TestZstdCodec(t *testing.T) {
	zb := mustBuild(t, pyramid(2), pmtilestest.Options{LeafSize: 3, InternalCompression: pmtiles.CompressionZstd})
	checkAllTiles(t, mustOpen(t, zb, pmtiles.Options{}), pyramid(2))
	b := pmtilestest.PatchHeader(mustBuild(t, pyramid(2), pmtilestest.Options{LeafSize: 3}), func(h *pmtiles.Header) {
		h.InternalCompression = pmtiles.CompressionZstd
	})
	if _, err := openBytes(t, b, pmtiles.Options{}); !errors.Is(err, pmtiles.ErrCorrupt) {
		t.Fatalf("gzip bytes under a zstd header: %v", err)
	}
	codecs := pmtiles.Codecs{pmtiles.CompressionZstd: func(r io.Reader) (io.ReadCloser, error) { return gzip.NewReader(r) }}
	r := mustOpen(t, b, pmtiles.Options{Codecs: codecs})
	checkAllTiles(t, r, pyramid(2))
}

// errReaderAt fails every read past the header.
type errReaderAt struct{ b []byte }

var errDisk = errors.New("disk on fire")

func (e errReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= pmtiles.HeaderSize {
		return 0, errDisk
	}
	return copy(p, e.b[off:]), nil
}

// I/O failures, a file shorter than its declared size, bad tile refs and a
// canceled context are reported as such, never as ErrInvalid.
func TestIOErrors(t *testing.T) {
	b := mustBuild(t, pyramid(2), pmtilestest.Options{LeafSize: 3})
	if _, err := pmtiles.Open(context.Background(), errReaderAt{b}, int64(len(b)), pmtiles.Options{}); !errors.Is(err, errDisk) || errors.Is(err, pmtiles.ErrInvalid) {
		t.Fatalf("disk error: %v", err)
	}
	if _, err := pmtiles.Open(context.Background(), bytes.NewReader(b[:130]), int64(len(b)), pmtiles.Options{}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short file: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := pmtiles.Open(ctx, bytes.NewReader(b), int64(len(b)), pmtiles.Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled open: %v", err)
	}
	r := mustOpen(t, b, pmtiles.Options{})
	if _, _, err := r.Tile(ctx, 2, 0, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled lookup: %v", err)
	}
	if err := r.VerifyFull(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled verify: %v", err)
	}
	for _, ref := range []pmtiles.TileRef{{Offset: -1, Length: 1}, {Offset: 0, Length: 0}, {Offset: int64(len(b)), Length: 1}} {
		if _, err := r.ReadTile(context.Background(), ref); !errors.Is(err, pmtiles.ErrSection) {
			t.Errorf("ref %+v: %v", ref, err)
		}
	}
	if r.Size() != int64(len(b)) || r.PackID() == "" {
		t.Fatalf("size %d, pack %q", r.Size(), r.PackID())
	}
}
