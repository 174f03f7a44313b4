package mbtiles

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// fixtureWant is what docs/edge.md §14 and testdata/SOURCES.md §4 say about
// each martin fixture.
type fixtureWant struct {
	file          string
	basicErr      error // nil: mounts under basic verification
	fullErr       error // nil: also passes VerifyFull
	typ           TileType
	minZ, maxZ    int
	tiles         int64
	dataZ         [2]int
	enc           Encoding // of tile 0/0/0 or the first tile
	agg           string   // expected AggTilesHash, "" to skip
	vectorLayers  bool
	bounds        Bounds
	center        Center
	firstTileHead []byte
}

var fixtures = []fixtureWant{
	{file: "world_cities.mbtiles", typ: TypeMVT, minZ: 0, maxZ: 6, tiles: 196, dataZ: [2]int{0, 6},
		enc: EncodingGzip, agg: "84792BF4EE9AEDDC5B1A60E707011FEE", vectorLayers: true,
		bounds: Bounds{-123.123590, -37.818085, 174.763027, 59.352706},
		center: Center{-75.9375, 38.788894, 6}, firstTileHead: []byte{0x1f, 0x8b}},
	{file: "zoomed_world_cities.mbtiles", typ: TypeMVT, minZ: 0, maxZ: 6, tiles: 72, dataZ: [2]int{6, 6},
		enc: EncodingGzip, agg: "D4E1030D57751A0B45A28A71267E46B8", vectorLayers: true,
		bounds: Bounds{-123.123590, -37.818085, 174.763027, 59.352706},
		center: Center{-75.9375, 38.788894, 6}},
	{file: "geography-class-png.mbtiles", typ: TypePNG, minZ: 0, maxZ: 1, tiles: 5, dataZ: [2]int{0, 1},
		enc: EncodingNone, bounds: Bounds{-180, -85.0511, 180, 85.0511}, center: Center{0, 20, 0},
		firstTileHead: []byte{0x89, 'P', 'N', 'G'}},
	{file: "uncompressed_mvt.mbtiles", typ: TypeMVT, minZ: 0, maxZ: 6, tiles: 1, enc: EncodingNone,
		vectorLayers: true, bounds: Bounds{-123.123590, -37.818085, 174.763027, 59.352706},
		center: Center{-75.9375, 38.788894, 6}, firstTileHead: []byte{0x1a}},
	{file: "json.mbtiles", typ: TypeJSON, tiles: 1, enc: EncodingNone,
		bounds: Bounds{-123.123590, -37.818085, 174.763027, 59.352706},
		// center zoom 6 is clamped into the pack's range 0–0.
		center: Center{-75.9375, 38.788894, 0}, firstTileHead: []byte(`{"foo":"bar"}`)},
	{file: "webp.mbtiles", typ: TypeWebP, tiles: 1, enc: EncodingNone,
		bounds: Bounds{-180, -85.05113, 180, 85.05113}, firstTileHead: []byte("RIFF")},
	{file: "bad_hash.mbtiles", fullErr: ErrHashMismatch, typ: TypeMVT, minZ: 0, maxZ: 6, tiles: 72,
		dataZ: [2]int{6, 6}, enc: EncodingGzip, agg: "D4E1030D57751A0B45A28A71267E46B8", vectorLayers: true,
		bounds: Bounds{-123.123590, -37.818085, 174.763027, 59.352706},
		center: Center{-75.9375, 38.788894, 6}},
	{file: "invalid.mbtiles", basicErr: ErrSchema},
}

func TestFixtures(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.file, func(t *testing.T) {
			p, err := Open(context.Background(), fixture(t, f.file), Options{})
			if f.basicErr != nil {
				if !errors.Is(err, f.basicErr) {
					t.Fatalf("Open: got %v, want %v", err, f.basicErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer p.Close()
			checkFixture(t, p, f)
			if err := p.VerifyFull(context.Background()); !errors.Is(err, f.fullErr) {
				t.Fatalf("VerifyFull: got %v, want %v", err, f.fullErr)
			}
		})
	}
}

func checkFixture(t *testing.T, p *Pack, f fixtureWant) {
	t.Helper()
	ctx := context.Background()
	if p.TileType() != f.typ || p.MinZoom() != f.minZ || p.MaxZoom() != f.maxZ {
		t.Errorf("type %v zoom %d–%d, want %v %d–%d", p.TileType(), p.MinZoom(), p.MaxZoom(), f.typ, f.minZ, f.maxZ)
	}
	st, err := p.Stats(ctx)
	wantGzip := int64(0)
	if f.enc == EncodingGzip {
		wantGzip = f.tiles // the gzip fixtures compress every tile
	}
	if err != nil || st.Tiles != f.tiles || st.MinZoom != f.dataZ[0] || st.MaxZoom != f.dataZ[1] || st.GzipTiles != wantGzip {
		t.Errorf("Stats = %+v, %v; want %d tiles at z%d–%d", st, err, f.tiles, f.dataZ[0], f.dataZ[1])
	}
	if f.agg != "" {
		if got, err := p.AggTilesHash(ctx); err != nil || got != f.agg {
			t.Errorf("AggTilesHash = %s, %v; want %s", got, err, f.agg)
		}
	}
	if _, ok := p.VectorLayers(); ok != f.vectorLayers {
		t.Errorf("VectorLayers present = %v, want %v", ok, f.vectorLayers)
	}
	if b := p.Bounds(); b != f.bounds {
		t.Errorf("Bounds = %+v, want %+v", b, f.bounds)
	}
	if c := p.Center(); c != f.center {
		t.Errorf("Center = %+v, want %+v", c, f.center)
	}
	r := readRows(t, p.Path())[0]
	data, found, err := p.Tile(ctx, uint32(r.z), uint32(r.x), r.xyzY())
	if err != nil || !found || !bytes.Equal(data, r.data) {
		t.Fatalf("Tile(first row) = %d bytes, %v, %v", len(data), found, err)
	}
	if EncodingOf(data) != f.enc || !bytes.HasPrefix(data, f.firstTileHead) {
		t.Errorf("first tile encoding %v head % x, want %v % x", EncodingOf(data), data[:4], f.enc, f.firstTileHead)
	}
}

func TestZoomedWorldCitiesAbsentBelowData(t *testing.T) {
	p := openT(t, fixture(t, "zoomed_world_cities.mbtiles"), Options{})
	// z0 lies inside the metadata zoom range 0–6 but holds no tile: the role
	// answers 204, which needs found = false and no error.
	if _, found, err := p.Tile(context.Background(), 0, 0, 0); found || err != nil {
		t.Fatalf("Tile(0/0/0) = %v, %v; want absent", found, err)
	}
}

func TestMetadataFixture(t *testing.T) {
	p := openT(t, fixture(t, "geography-class-png.mbtiles"), Options{})
	m := p.Metadata()
	if m["name"] != "Geography Class" || m["version"] != "1.0.0" {
		t.Fatalf("metadata %v", m)
	}
	m["name"] = "changed"
	if v, _ := p.MetadataValue("name"); v != "Geography Class" {
		t.Fatal("Metadata returned the pack's own map")
	}
	if _, ok := p.MetadataValue("format"); ok {
		t.Fatal("format should be absent: the type was sniffed")
	}
}
