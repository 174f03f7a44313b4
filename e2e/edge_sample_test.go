package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/fixtures"
	"github.com/ronhq/ron/roles/edge/pmtiles"
)

// sampleMountLimit bounds the README's sample pack being served after it
// is copied into a packs folder made while ron runs: the default
// pack_poll_interval (2 s) acts on a new file at its second equal stat.
const sampleMountLimit = 20 * time.Second

// TestReadmeSamplePack follows the README's edge tour on embedded
// defaults: ron runs before <data dir>/packs exists, the user makes the
// folder and copies examples/packs/world.pmtiles into it, and the edge
// serves its tiles and a TileJSON whose attribution credits the tiles as
// their licence asks.
func TestReadmeSamplePack(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{args: []string{"--roles", "edge"}})
	sample := filepath.Join(fixtures.ModuleRoot(t), "examples", "packs", "world.pmtiles")
	b, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	packs := filepath.Join(n.dataDir, "packs")
	if err := os.Mkdir(packs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(packs, "world.pmtiles"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	tileJSON := "http://" + n.edge + "/tiles/world.json"
	poll(t, sampleMountLimit, "the sample pack served", func() bool {
		r, err := send(context.Background(), "GET", tileJSON, nil, nil)
		return err == nil && r.status == 200
	})
	var tj struct {
		Attribution string   `json:"attribution"`
		Tiles       []string `json:"tiles"`
		MaxZoom     int      `json:"maxzoom"`
	}
	if err := json.Unmarshal(do(t, "GET", tileJSON, nil, nil).body, &tj); err != nil {
		t.Fatal(err)
	}
	for _, credit := range []string{"Stamen Design", "CC BY 4.0", "OpenStreetMap", "ODbL"} {
		if !bytes.Contains([]byte(tj.Attribution), []byte(credit)) {
			t.Errorf("TileJSON attribution %q lacks %q", tj.Attribution, credit)
		}
	}
	if tj.MaxZoom != 2 || len(tj.Tiles) != 1 {
		t.Errorf("TileJSON maxzoom %d, tiles %v", tj.MaxZoom, tj.Tiles)
	}
	r, err := pmtiles.Open(context.Background(), bytes.NewReader(b), int64(len(b)), pmtiles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref, ok, err := r.Tile(context.Background(), 2, 1, 1)
	if err != nil || !ok {
		t.Fatalf("tile 2/1/1 of the sample: %v %v", ok, err)
	}
	want, err := r.ReadTile(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	got := do(t, "GET", "http://"+n.edge+"/tiles/world/2/1/1.png", nil, nil)
	if got.status != 200 || got.header.Get("Content-Type") != "image/png" || !bytes.Equal(got.body, want) {
		t.Fatalf("tile 2/1/1: %d %q, %d bytes (want 200 image/png, the pack's %d bytes)", got.status, got.header.Get("Content-Type"), len(got.body), len(want))
	}
}
