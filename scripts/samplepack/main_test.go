package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ronhq/ron/internal/fixtures"
	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// sample is the committed pack of the README's tour.
func sample(t *testing.T) string {
	t.Helper()
	return filepath.Join(fixtures.ModuleRoot(t), "examples", "packs", "world.pmtiles")
}

// openPack opens and fully verifies the archive at path.
func openPack(t *testing.T, path string) *pmtiles.Reader {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := pmtiles.Open(context.Background(), bytes.NewReader(b), int64(len(b)), pmtiles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.VerifyFull(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCommittedSample: the committed pack holds exactly the source's zoom
// 0–2 tiles, byte for byte, as PNG, and its metadata carries the credit
// line the tiles' licence requires.
func TestCommittedSample(t *testing.T) {
	r := openPack(t, sample(t))
	h := r.Header()
	if h.TileType != pmtiles.TileTypePNG || h.MinZoom != 0 || h.MaxZoom != 2 {
		t.Fatalf("type %v, zoom %d–%d; want PNG, 0–2", h.TileType, h.MinZoom, h.MaxZoom)
	}
	var meta metadata
	if err := json.Unmarshal(r.Metadata(), &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Attribution != Attribution || meta.Name != "world" {
		t.Fatalf("metadata %+v", meta)
	}
	want, _, err := ReadTiles(fixtures.Path(t, "pmtiles", "stamen_toner_z3.pmtiles"), 2)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := ReadTiles(sample(t), 255)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 21 || len(got) != len(want) {
		t.Fatalf("%d tiles, source has %d up to zoom 2; want 21", len(got), len(want))
	}
	for i := range want {
		assertTile(t, got[i], want[i])
	}
}

// TestBuildRoundTrip: what Build writes opens, verifies and holds the
// source's tiles up to the zoom asked for.
func TestBuildRoundTrip(t *testing.T) {
	src := fixtures.Path(t, "pmtiles", "stamen_toner_z3.pmtiles")
	b, err := Build(src, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "w.pmtiles")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	openPack(t, out)
	got, _, err := ReadTiles(out, 255)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := ReadTiles(src, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || len(want) != 5 {
		t.Fatalf("%d and %d tiles; want 5 up to zoom 1", len(got), len(want))
	}
	for i := range want {
		assertTile(t, got[i], want[i])
	}
	if _, err := Build(filepath.Join(t.TempDir(), "missing.pmtiles"), 1); err == nil {
		t.Fatal("a missing source built")
	}
}

func assertTile(t *testing.T, got, want pmtilestest.Tile) {
	t.Helper()
	if got.Z != want.Z || got.X != want.X || got.Y != want.Y || !bytes.Equal(got.Data, want.Data) {
		t.Fatalf("tile %d/%d/%d (%d bytes), want %d/%d/%d (%d bytes)", got.Z, got.X, got.Y, len(got.Data), want.Z, want.X, want.Y, len(want.Data))
	}
}
