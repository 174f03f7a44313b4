package packs

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/tiletype"
)

// What docs/edge.md §14 says of each fixture folder, per level.
var fixtureOutcomes = []struct {
	kind, level     string
	mounted, failed []string
}{
	{"pmtiles", VerifyBasic, []string{"stamen_toner_z3", "test_fixture_1", "test_fixture_2", "test_fixture_mlt"},
		[]string{"empty", "invalid", "invalid_v4"}},
	{"pmtiles", VerifyFull, []string{"stamen_toner_z3", "test_fixture_1", "test_fixture_2", "test_fixture_mlt"},
		[]string{"empty", "invalid", "invalid_v4"}},
	{"mbtiles", VerifyBasic, []string{"bad_hash", "geography-class-png", "json", "uncompressed_mvt", "webp",
		"world_cities", "zoomed_world_cities"}, []string{"invalid"}},
	{"mbtiles", VerifyFull, []string{"geography-class-png", "json", "uncompressed_mvt", "webp", "world_cities",
		"zoomed_world_cities"}, []string{"bad_hash", "invalid"}},
}

// Every fixture mounts or fails as docs/edge.md §14 lists, at both levels; failures are
// missing for readiness, counted, and in Status.
func TestFixtureOutcomes(t *testing.T) {
	for _, c := range fixtureOutcomes {
		t.Run(c.kind+"/"+c.level, func(t *testing.T) {
			s := mountSet(t, Options{Dir: fixtureDir(t, c.kind), Verify: c.level})
			if got := names(s); !slices.Equal(got, c.mounted) {
				t.Fatalf("mounted %v, want %v", got, c.mounted)
			}
			var missing []string
			for _, n := range c.failed {
				missing = append(missing, "edge:pack:"+n)
			}
			if got := s.Missing(); !slices.Equal(got, missing) {
				t.Fatalf("missing %v, want %v", got, missing)
			}
			st := s.Status()
			if len(st.Failed) != len(c.failed) || len(st.Mounted) != len(c.mounted) || st.Skipped != nil || st.LastError == "" {
				t.Fatalf("status %+v", st)
			}
			for _, n := range c.mounted {
				if metric(s, `ron_edge_pack_mounts_total{role="edge",pack="`+n+`",result="ok"}`) != 1 {
					t.Errorf("%s: no ok count", n)
				}
			}
			for _, n := range c.failed {
				if metric(s, `ron_edge_pack_mounts_total{role="edge",pack="`+n+`",result="error"}`) != 1 {
					t.Errorf("%s: no error count", n)
				}
			}
			if got := metric(s, `ron_edge_packs_mounted{role="edge",kind="`+c.kind+`"}`); got != float64(len(c.mounted)) {
				t.Errorf("packs_mounted %v", got)
			}
		})
	}
}

// The failures carry the reader's reason.
func TestFixtureFailureReasons(t *testing.T) {
	s := mountSet(t, Options{Dir: fixtureDir(t, "pmtiles")})
	st := s.Status()
	for name, want := range map[string]error{"empty": pmtiles.ErrShort, "invalid": pmtiles.ErrInvalid, "invalid_v4": pmtiles.ErrFutureVersion} {
		_, err := Open(context.Background(), fixtureDir(t, "pmtiles")+"/"+name+".pmtiles", OpenOptions{})
		if !errors.Is(err, want) || st.Failed[name] != err.Error() {
			t.Errorf("%s: %v; status %q", name, err, st.Failed[name])
		}
	}
}

// The serving view of the PMTiles fixtures (docs/edge.md §14).
func TestPMTilesFixturePacks(t *testing.T) {
	s := mountSet(t, Options{Dir: fixtureDir(t, "pmtiles")})
	ctx := context.Background()
	p, release, ok := s.Acquire("stamen_toner_z3")
	if !ok {
		t.Fatal("stamen not mounted")
	}
	defer release()
	if p.Kind() != KindPMTiles || p.TileType() != tiletype.TypePNG || p.MinZoom() != 0 || p.MaxZoom() != 3 ||
		len(p.ID()) != 32 || p.Size() != 716052 || string(p.Metadata()) != "{}" {
		t.Fatalf("stamen: %s %v z%d–%d id %q size %d meta %s", p.Kind(), p.TileType(), p.MinZoom(), p.MaxZoom(), p.ID(), p.Size(), p.Metadata())
	}
	t58, err58 := p.Tile(ctx, 3, 4, 7)
	id59, _ := pmtiles.TileID(3, 4, 7)
	if c, known := p.Coding(); err58 != nil || !t58.Found || t58.ID != id59 || t58.Coding != tiletype.None || c != tiletype.None || !known {
		t.Fatalf("tile: %+v %v", t58, err58)
	}
	head := make([]byte, 7)
	if n, err := p.ReadAt(head, 0); n != 7 || err != nil || string(head) != "PMTiles" {
		t.Fatalf("ReadAt: %q %v", head, err)
	}
	if _, err := p.Tile(ctx, 3, 8, 0); !errors.Is(err, ErrInvalidTile) {
		t.Fatalf("x = 8 at z3: %v", err)
	}
	if err := p.Close(); !errors.Is(err, ErrMounted) {
		t.Fatalf("Close of a mounted pack: %v", err)
	}
	for name, want := range map[string][2]int{"test_fixture_1": {69, 49}, "test_fixture_2": {67, 47}} {
		q, rel, _ := s.Acquire(name)
		tl, err := q.Tile(ctx, 0, 0, 0)
		rel()
		plain, derr := tl.Coding.Decode(tl.Data, 1<<20)
		if q.TileType() != tiletype.TypeMVT || err != nil || tl.Coding != tiletype.Gzip || len(tl.Data) != want[0] ||
			derr != nil || len(plain) != want[1] {
			t.Errorf("%s: %v %v %d bytes, %d decoded (%v %v)", name, q.TileType(), tl.Coding, len(tl.Data), len(plain), err, derr)
		}
	}
	q, rel, _ := s.Acquire("test_fixture_mlt")
	defer rel()
	if tl, err := q.Tile(ctx, 0, 0, 0); q.TileType() != tiletype.TypeMLT || err != nil || tl.Found {
		t.Fatalf("mlt: %v %+v %v", q.TileType(), tl, err)
	}
}

// The serving view of the MBTiles fixtures (docs/edge.md §14).
func TestMBTilesFixturePacks(t *testing.T) {
	s := mountSet(t, Options{Dir: fixtureDir(t, "mbtiles")})
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		typ    tiletype.Type
		z0     bool // tile 0/0/0 exists
		coding tiletype.Coding
		layers bool
	}{
		{"world_cities", tiletype.TypeMVT, true, tiletype.Gzip, true},
		{"zoomed_world_cities", tiletype.TypeMVT, false, tiletype.None, true},
		{"geography-class-png", tiletype.TypePNG, true, tiletype.None, false},
		{"json", tiletype.TypeJSON, true, tiletype.None, false},
	} {
		p, release, ok := s.Acquire(c.name)
		if !ok {
			t.Fatalf("%s not mounted", c.name)
		}
		tl, err := p.Tile(ctx, 0, 0, 0)
		_, layers := p.VectorLayers()
		if p.Kind() != KindMBTiles || p.TileType() != c.typ || err != nil || tl.Found != c.z0 || tl.Coding != c.coding || layers != c.layers {
			t.Errorf("%s: %v %+v %v layers %v", c.name, p.TileType(), tl, err, layers)
		}
		if _, known := p.Coding(); known {
			t.Errorf("%s: MBTiles coding known", c.name)
		}
		if _, err := p.ReadAt(make([]byte, 1), 0); !errors.Is(err, ErrNotRaw) {
			t.Errorf("%s ReadAt: %v", c.name, err)
		}
		release()
	}
	p, release, _ := s.Acquire("world_cities")
	defer release()
	if name, ok := p.MetaString("name"); !ok || name == "" || p.MinZoom() != 0 || p.MaxZoom() != 6 {
		t.Fatalf("world_cities name %q z%d–%d", name, p.MinZoom(), p.MaxZoom())
	}
	if c := p.Center(); c != [3]float64{-75.9375, 38.788894, 6} {
		t.Fatalf("center %v", c)
	}
	if b := p.Bounds(); b != [4]float64{-123.123590, -37.818085, 174.763027, 59.352706} {
		t.Fatalf("bounds %v", b)
	}
}

// Inspect counts what the fixtures hold.
func TestInspect(t *testing.T) {
	ctx := context.Background()
	p, err := Open(ctx, fixtureDir(t, "pmtiles")+"/stamen_toner_z3.pmtiles", OpenOptions{Verify: VerifyFull})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	in, err := p.Inspect(ctx)
	if err != nil || in.Entries != 84 || in.Tiles != 85 || in.Header == nil || in.Contents != int64(in.Header.TileContents) || in.Header.Version != 3 ||
		in.Compression != "none" || in.TileType != "png" || in.RootEntries != 84 || in.Name != "stamen_toner_z3" {
		t.Fatalf("%+v %v", in, err)
	}
	m, err := Open(ctx, fixtureDir(t, "mbtiles")+"/world_cities.mbtiles", OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	in, err = m.Inspect(ctx)
	if err != nil || in.Entries != 196 || in.Tiles != 196 || in.Compression != "gzip" || in.Header != nil ||
		!strings.Contains(string(in.Metadata), `"format":"pbf"`) {
		t.Fatalf("%+v %v", in, err)
	}
}
