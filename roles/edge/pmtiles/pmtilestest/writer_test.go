package pmtilestest_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Build: runs and deduplicated blobs are written, header counts and zooms
// follow the tiles, and the result reads back.
func TestBuildRunsAndDedup(t *testing.T) {
	tiles := []pmtilestest.Tile{
		{Z: 1, X: 0, Y: 0, Data: []byte("sea")}, // id 1
		{Z: 1, X: 0, Y: 1, Data: []byte("sea")}, // id 2: run with 1
		{Z: 1, X: 1, Y: 1, Data: []byte("land")},
		{Z: 1, X: 1, Y: 0, Data: []byte("sea")}, // id 4: dedup, not a run
		{Z: 2, X: 0, Y: 0, Data: []byte("old")},
		{Z: 2, X: 0, Y: 0, Data: []byte("new")}, // last one wins
	}
	b, err := pmtilestest.Build(tiles, pmtilestest.Options{TileType: pmtiles.TileTypeJPEG, LeafSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	r, err := pmtiles.Open(context.Background(), bytes.NewReader(b), int64(len(b)), pmtiles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header()
	if h.MinZoom != 1 || h.MaxZoom != 2 || h.AddressedTiles != 5 || h.TileEntries != 4 || h.TileContents != 3 ||
		h.TileType != pmtiles.TileTypeJPEG || h.InternalCompression != pmtiles.CompressionGzip || h.LeafLength == 0 {
		t.Fatalf("header %+v", h)
	}
	want := map[uint64]string{1: "sea", 2: "sea", 3: "land", 4: "sea", 5: "new"}
	for id, data := range want {
		ref, ok, err := r.TileByID(context.Background(), id)
		if err != nil || !ok {
			t.Fatalf("id %d: %v %v", id, ok, err)
		}
		if got, _ := r.ReadTile(context.Background(), ref); string(got) != data {
			t.Fatalf("id %d: %q", id, got)
		}
	}
	if err := r.VerifyFull(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// The empty archive and the writer's refusals.
func TestBuildEdges(t *testing.T) {
	b, err := pmtilestest.Build(nil, pmtilestest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := pmtiles.Open(context.Background(), bytes.NewReader(b), int64(len(b)), pmtiles.Options{})
	if err != nil || len(r.RootEntries()) != 0 || r.Header().TileDataLength != 0 {
		t.Fatalf("empty archive: %v", err)
	}
	if _, err := pmtilestest.Build([]pmtilestest.Tile{{Z: 1, X: 2}}, pmtilestest.Options{}); err == nil {
		t.Fatal("out-of-range tile accepted")
	}
	if _, err := pmtilestest.Build(nil, pmtilestest.Options{InternalCompression: 5}); err == nil {
		t.Fatal("compression 5 accepted")
	}
	if _, err := pmtilestest.Compress(pmtiles.CompressionUnknown, nil); err == nil {
		t.Fatal("unknown compression accepted")
	}
}

// EncodeDirectory writes contiguous offsets as 0 and others as offset + 1
// (PMTiles v3 specification, appendix A.1).
func TestEncodeDirectoryOffsets(t *testing.T) {
	got := pmtilestest.EncodeDirectory([]pmtiles.Entry{
		{TileID: 5, Offset: 0, Length: 10, RunLength: 1},
		{TileID: 6, Offset: 10, Length: 3, RunLength: 2},
		{TileID: 9, Offset: 0, Length: 10, RunLength: 1},
	})
	want := []byte{3, 5, 1, 3, 1, 2, 1, 10, 3, 10, 1, 0, 1}
	if !bytes.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// PatchHeader rewrites only the header.
func TestPatchHeader(t *testing.T) {
	b, _ := pmtilestest.Build([]pmtilestest.Tile{{Data: []byte("x")}}, pmtilestest.Options{})
	p := pmtilestest.PatchHeader(b, func(h *pmtiles.Header) { h.TileType = pmtiles.TileTypeAVIF })
	if h, err := pmtiles.ParseHeader(p); err != nil || h.TileType != pmtiles.TileTypeAVIF || !bytes.Equal(p[pmtiles.HeaderSize:], b[pmtiles.HeaderSize:]) {
		t.Fatalf("patched: %v", err)
	}
	if _, err := pmtiles.ParseHeader(b); err != nil {
		t.Fatal("original changed")
	}
}
