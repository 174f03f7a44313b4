package packs

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// openBuilt writes b to a temporary file and opens it.
func openBuilt(t *testing.T, b []byte) *Pack {
	t.Helper()
	p, err := Open(context.Background(), writeFile(t, t.TempDir(), "p.pmtiles", b), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// PMTiles bounds and center (docs/edge.md §6.4): header values when valid, the center
// zoom clamped into the zoom range; otherwise the default bounds and their
// midpoint at minzoom.
func TestPMTilesGeo(t *testing.T) {
	base := archive(t, pyramid(3, 'g'), pmtilestest.Options{}) // zoom 0–3
	e7 := func(v float64) int32 { return int32(math.Round(v * 1e7)) }
	for _, c := range []struct {
		name   string
		patch  func(h *pmtiles.Header)
		bounds [4]float64
		center [3]float64
	}{
		{"valid", func(h *pmtiles.Header) {
			h.MinLonE7, h.MinLatE7, h.MaxLonE7, h.MaxLatE7 = e7(-10), e7(40), e7(20), e7(60)
			h.CenterLonE7, h.CenterLatE7, h.CenterZoom = e7(5), e7(50), 2
		}, [4]float64{-10, 40, 20, 60}, [3]float64{5, 50, 2}},
		{"zoom clamped", func(h *pmtiles.Header) {
			h.MinLonE7, h.MinLatE7, h.MaxLonE7, h.MaxLatE7 = e7(-10), e7(40), e7(20), e7(60)
			h.CenterLonE7, h.CenterLatE7, h.CenterZoom = e7(5), e7(50), 9
		}, [4]float64{-10, 40, 20, 60}, [3]float64{5, 50, 3}},
		{"all zero", func(h *pmtiles.Header) {
			h.MinLonE7, h.MinLatE7, h.MaxLonE7, h.MaxLatE7, h.CenterLonE7, h.CenterLatE7, h.CenterZoom = 0, 0, 0, 0, 0, 0, 0
		}, defaultBounds, [3]float64{0, 0, 0}},
		{"inverted, center off the map", func(h *pmtiles.Header) {
			h.MinLonE7, h.MaxLonE7 = e7(20), e7(-10)
			h.CenterLonE7, h.CenterLatE7 = e7(200), e7(0)
		}, defaultBounds, [3]float64{0, 0, 0}},
		{"latitude out of range", func(h *pmtiles.Header) {
			h.MinLatE7, h.MaxLatE7, h.MinLonE7, h.MaxLonE7 = e7(-95), e7(10), e7(0), e7(10)
			h.CenterLonE7, h.CenterLatE7, h.CenterZoom = e7(1), e7(1), 1
		}, defaultBounds, [3]float64{1, 1, 1}},
	} {
		p := openBuilt(t, pmtilestest.PatchHeader(base, c.patch))
		if p.Bounds() != c.bounds || p.Center() != c.center {
			t.Errorf("%s: bounds %v center %v", c.name, p.Bounds(), p.Center())
		}
	}
}

// PMTiles metadata: string members through MetaString, vector_layers when
// it is an array.
func TestPMTilesMetadata(t *testing.T) {
	meta := `{"name":"N","version":1,"attribution":"<a>©</a>","description":null,"vector_layers":[{"id":"roads"}]}`
	p := openBuilt(t, archive(t, pyramid(1, 'm'), pmtilestest.Options{Metadata: []byte(meta)}))
	for key, want := range map[string]string{"name": "N", "attribution": "<a>©</a>"} {
		if v, ok := p.MetaString(key); !ok || v != want {
			t.Errorf("%s: %q %v", key, v, ok)
		}
	}
	for _, key := range []string{"version", "description", "vector_layers", "absent"} {
		if v, ok := p.MetaString(key); ok {
			t.Errorf("%s: %q", key, v)
		}
	}
	if vl, ok := p.VectorLayers(); !ok || string(vl) != `[{"id":"roads"}]` {
		t.Fatalf("vector_layers %s %v", vl, ok)
	}
	q := openBuilt(t, archive(t, pyramid(1, 'm'), pmtilestest.Options{Metadata: []byte(`{"vector_layers":{}}`)}))
	if _, ok := q.VectorLayers(); ok {
		t.Fatal("a non-array vector_layers")
	}
}

// Identity (docs/edge.md §4.4): equal for copies keeping the mtime, different after a
// rewrite, and the MBTiles kind byte differs from PMTiles.
func TestPackID(t *testing.T) {
	dir := t.TempDir()
	b := archive(t, pyramid(1, 'i'), pmtilestest.Options{})
	a := writeFile(t, dir, "a.pmtiles", b)
	c := writeFile(t, dir, "c.pmtiles", b)
	ctx := context.Background()
	mtime := fileMtime(t, a)
	if err := chtimes(c, mtime); err != nil {
		t.Fatal(err)
	}
	pa, _ := Open(ctx, a, OpenOptions{})
	pc, _ := Open(ctx, c, OpenOptions{})
	defer pa.Close()
	defer pc.Close()
	want := pmtiles.PackID(pmtiles.KindPMTiles, int64(len(b)), mtime.UnixNano(), b)
	if pa.ID() != want || pc.ID() != want || !pa.ModTime().Equal(mtime) {
		t.Fatalf("ids %s %s, want %s", pa.ID(), pc.ID(), want)
	}
	if err := chtimes(c, mtime.Add(1)); err != nil {
		t.Fatal(err)
	}
	pc2, _ := Open(ctx, c, OpenOptions{})
	defer pc2.Close()
	if pc2.ID() == want {
		t.Fatal("id unchanged by a new mtime")
	}
	if _, err := Open(ctx, dir, OpenOptions{}); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("a folder: %v", err)
	}
}
