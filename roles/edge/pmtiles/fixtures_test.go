package pmtiles_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/ronhq/ron/roles/edge/pmtiles"
)

// stamen_toner_z3 (docs/edge.md §14, SOURCES.md §3): PNG, z0–3, 84 entries
// for ids 0–84, the entry at 58 covering 58 and 59, uncompressed tiles,
// metadata {}, and the tile locations recorded when the fixture was taken.
func TestFixtureStamen(t *testing.T) {
	b := fixture(t, "stamen_toner_z3.pmtiles")
	r := mustOpen(t, b, pmtiles.Options{})
	h := r.Header()
	if h.TileType != pmtiles.TileTypePNG || h.MinZoom != 0 || h.MaxZoom != 3 || h.TileCompression != pmtiles.CompressionNone ||
		h.InternalCompression != pmtiles.CompressionGzip || !h.Clustered || h.LeafLength != 0 {
		t.Fatalf("header %+v", h)
	}
	if string(r.Metadata()) != "{}" || len(r.Warnings()) != 0 {
		t.Fatalf("metadata %q, warnings %v", r.Metadata(), r.Warnings())
	}
	if err := r.VerifyFull(context.Background()); err != nil {
		t.Fatal(err)
	}
	var entries []pmtiles.Entry
	if err := r.Entries(context.Background(), func(e pmtiles.Entry) error { entries = append(entries, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 84 || entries[0].TileID != 0 || entries[83].TileID != 84 {
		t.Fatalf("%d entries, first %+v, last %+v", len(entries), entries[0], entries[len(entries)-1])
	}
	for _, e := range entries {
		if (e.TileID == 58) != (e.RunLength == 2) || e.RunLength == 0 {
			t.Fatalf("entry %+v", e)
		}
	}
	stamenAllTiles(t, r)
	for _, c := range []struct {
		z, x, y uint32
		off, n  int64
		sha     string
	}{
		{0, 0, 0, 395, 18404, "08d25d79589d91013b177e04e107d3dc35543f1e804f5bcbc5b508e463d3d1fa"},
		{1, 0, 0, 18799, 18021, "d5eb91ec40b30888b20df522bd9a09a8cf1e836b55f8d464f33e6bc1cbff3ed3"},
		{3, 4, 2, 638336, 24475, "3d0087ac575b6af3edc1dab92089131b68b5d295d17adf8bd8bd99bae530f626"},
		{3, 7, 7, 516142, 4227, "386c0b75b61932ddfed7cc03af40c205ae8eb35396ddce3746c202bd8bc167ec"},
	} {
		ref, ok, err := r.Tile(context.Background(), c.z, c.x, c.y)
		if err != nil || !ok || ref.Offset != c.off || ref.Length != c.n {
			t.Fatalf("%d/%d/%d: %+v %v %v", c.z, c.x, c.y, ref, ok, err)
		}
		data := readTile(t, r, ref)
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != c.sha || !bytes.HasPrefix(data, []byte("\x89PNG")) {
			t.Fatalf("%d/%d/%d: sha256 %x", c.z, c.x, c.y, sum)
		}
	}
}

// stamenAllTiles: every tile of zooms 0–3 is present, ids 58 and 59 share
// one blob, and zoom 4 is absent.
func stamenAllTiles(t *testing.T, r *pmtiles.Reader) {
	t.Helper()
	for id := uint64(0); id <= 84; id++ {
		if _, ok, err := r.TileByID(context.Background(), id); !ok || err != nil {
			t.Fatalf("id %d: %v %v", id, ok, err)
		}
	}
	a, _, _ := r.TileByID(context.Background(), 58)
	b, _, _ := r.TileByID(context.Background(), 59)
	if a.Offset != b.Offset || a.Length != b.Length || a.TileID != 58 || b.TileID != 59 {
		t.Fatalf("58 %+v, 59 %+v", a, b)
	}
	if _, ok, err := r.Tile(context.Background(), 4, 0, 0); ok || err != nil {
		t.Fatalf("z4: %v %v", ok, err)
	}
	if _, _, err := r.Tile(context.Background(), 3, 8, 0); !errors.Is(err, pmtiles.ErrInvalidTile) {
		t.Fatalf("3/8/0: %v", err)
	}
}

func readTile(t *testing.T, r *pmtiles.Reader, ref pmtiles.TileRef) []byte {
	t.Helper()
	data, err := r.ReadTile(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	viaSection, err := io.ReadAll(r.TileReader(ref))
	if err != nil || !bytes.Equal(viaSection, data) {
		t.Fatalf("TileReader disagrees: %v", err)
	}
	return data
}

// test_fixture_1 / _2: MVT, gzip, one tile 0/0/0 of 69 / 67 bytes that
// decode to 49 / 47.
func TestFixtureOneTile(t *testing.T) {
	for _, c := range []struct {
		name          string
		stored, plain int
		sha, metaName string
	}{
		{"test_fixture_1.pmtiles", 69, 49, "fff5febe51bfbb2a6ae3ce37fa9863a763090f1954f66af6f2ddc74d52d27d98", "test_fixture_1.pmtiles"},
		{"test_fixture_2.pmtiles", 67, 47, "938ce0444410064ddc581816b2f295f43dbce7059051b64a5c984b0a206ce0f1", "test_fixture_2.pmtiles"},
	} {
		r := mustOpen(t, fixture(t, c.name), pmtiles.Options{})
		if err := r.VerifyFull(context.Background()); err != nil {
			t.Fatal(err)
		}
		h := r.Header()
		if h.TileType != pmtiles.TileTypeMVT || h.TileCompression != pmtiles.CompressionGzip || h.MaxZoom != 0 {
			t.Fatalf("%s: header %+v", c.name, h)
		}
		ref, ok, err := r.Tile(context.Background(), 0, 0, 0)
		if err != nil || !ok || ref.Offset != 399 || ref.Length != int64(c.stored) {
			t.Fatalf("%s: %+v %v %v", c.name, ref, ok, err)
		}
		data := readTile(t, r, ref)
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != c.sha {
			t.Fatalf("%s: sha256 %x", c.name, sum)
		}
		if plain := gunzip(t, data); len(plain) != c.plain {
			t.Fatalf("%s: decoded %d bytes", c.name, len(plain))
		}
		var meta struct {
			Name         string            `json:"name"`
			VectorLayers []json.RawMessage `json:"vector_layers"`
		}
		if err := json.Unmarshal(r.Metadata(), &meta); err != nil || meta.Name != c.metaName || len(meta.VectorLayers) == 0 {
			t.Fatalf("%s: metadata %+v %v", c.name, meta, err)
		}
		if _, ok, err := r.Tile(context.Background(), 1, 0, 0); ok || err != nil {
			t.Fatalf("%s: 1/0/0 %v %v", c.name, ok, err)
		}
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// test_fixture_mlt: type 6, no entries at all.
func TestFixtureMLT(t *testing.T) {
	r := mustOpen(t, fixture(t, "test_fixture_mlt.pmtiles"), pmtiles.Options{})
	if r.Header().TileType != pmtiles.TileTypeMLT || len(r.RootEntries()) != 0 {
		t.Fatalf("header %+v, root %v", r.Header(), r.RootEntries())
	}
	if err := r.VerifyFull(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := r.Tile(context.Background(), 0, 0, 0); ok || err != nil {
		t.Fatalf("0/0/0: %v %v", ok, err)
	}
	var meta map[string]any
	if err := json.Unmarshal(r.Metadata(), &meta); err != nil || meta["vector_layers"] == nil {
		t.Fatalf("metadata: %v", err)
	}
}

// empty, invalid and invalid_v4 fail to open, each with its own error.
func TestFixturesInvalid(t *testing.T) {
	for name, want := range map[string]error{
		"empty.pmtiles":      pmtiles.ErrShort,
		"invalid.pmtiles":    pmtiles.ErrBadMagic,
		"invalid_v4.pmtiles": pmtiles.ErrFutureVersion,
	} {
		if _, err := openBytes(t, fixture(t, name), pmtiles.Options{}); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
}
