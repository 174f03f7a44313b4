package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// tileJSON is the part of a TileJSON document the tests read.
type tileJSON struct {
	TileJSON string   `json:"tilejson"`
	Name     string   `json:"name"`
	Scheme   string   `json:"scheme"`
	Tiles    []string `json:"tiles"`
	MinZoom  int      `json:"minzoom"`
	MaxZoom  int      `json:"maxzoom"`
}

// getTileJSON fetches and decodes a TileJSON document.
func getTileJSON(t *testing.T, url string) tileJSON {
	t.Helper()
	r := do(t, http.MethodGet, url, nil, nil)
	if r.status != http.StatusOK || r.err != nil {
		t.Fatalf("GET %s: %d %v %.300s", url, r.status, r.err, r.body)
	}
	var tj tileJSON
	if err := json.Unmarshal(r.body, &tj); err != nil {
		t.Fatalf("GET %s: %q is not TileJSON: %v", url, r.body, err)
	}
	if tj.TileJSON != "3.0.0" || tj.Scheme != "xyz" || len(tj.Tiles) != 1 {
		t.Fatalf("GET %s: %s", url, r.body)
	}
	return tj
}

// tileURL fills a TileJSON tiles template.
func tileURL(template string, zxy [3]uint32) string {
	return strings.NewReplacer("{z}", fmt.Sprint(zxy[0]), "{x}", fmt.Sprint(zxy[1]), "{y}", fmt.Sprint(zxy[2])).Replace(template)
}

// TestEdgeThroughGateway: `ron serve` with every role; the gateway passes
// /edge/{rest} to the edge as /{rest} (docs/gateway.md §1). The TileJSON
// read through the gateway names tiles under /edge on the gateway's own
// host (the gateway is a trusted peer: X-Forwarded-Host and
// X-Forwarded-Prefix, docs/edge.md §6.4), read directly it names the edge's;
// the tiles behind both templates are the Go reader's bytes, with equal
// validators.
func TestEdgeThroughGateway(t *testing.T) {
	t.Parallel()
	packs := t.TempDir()
	src := edgeFixture(t, "pmtiles", "stamen_toner_z3.pmtiles")
	edgeCopyFile(t, src, filepath.Join(packs, "toner.pmtiles"))
	archive := edgeReadFile(t, src)
	e := startEdge(t, edgeSpec{roles: "registry,index,storage,edge,gateway", packs: packs, more: gwTestConfig})
	gw := "http://" + e.gateway

	viaGW := getTileJSON(t, gw+"/edge/tiles/toner.json")
	if want := gw + "/edge/tiles/toner/{z}/{x}/{y}.png"; viaGW.Tiles[0] != want {
		t.Errorf("TileJSON through the gateway: tiles %q, want %q", viaGW.Tiles[0], want)
	}
	direct := getTileJSON(t, e.edgeURL("/tiles/toner.json"))
	if want := e.edgeURL("/tiles/toner/{z}/{x}/{y}.png"); direct.Tiles[0] != want {
		t.Errorf("TileJSON from the edge: tiles %q, want %q", direct.Tiles[0], want)
	}
	if viaGW.MinZoom != 0 || viaGW.MaxZoom != 3 || viaGW.Name != direct.Name {
		t.Errorf("TileJSON through the gateway %+v, directly %+v", viaGW, direct)
	}

	want := edgeGoTiles(t, archive, pmtTiles)
	for i, zxy := range pmtTiles {
		a := do(t, http.MethodGet, tileURL(viaGW.Tiles[0], zxy), nil, nil)
		b := do(t, http.MethodGet, tileURL(direct.Tiles[0], zxy), nil, nil)
		for _, r := range []httpResult{a, b} {
			if r.status != http.StatusOK || r.header.Get("Content-Type") != "image/png" || !bytes.Equal(r.body, want[i]) {
				t.Errorf("tile %v: %d %q, %d bytes (the Go reader: %d bytes)", zxy, r.status, r.header.Get("Content-Type"), len(r.body), len(want[i]))
			}
		}
		if a.header.Get("ETag") == "" || a.header.Get("ETag") != b.header.Get("ETag") {
			t.Errorf("tile %v: ETag %q through the gateway, %q from the edge", zxy, a.header.Get("ETag"), b.header.Get("ETag"))
		}
	}

	r := do(t, http.MethodGet, gw+"/edge/packs/toner.pmtiles", hdr("Range", "bytes=0-126"), nil)
	if r.status != http.StatusPartialContent || !bytes.Equal(r.body, archive[:127]) {
		t.Errorf("Range bytes=0-126 of the archive through the gateway: %d, %d bytes", r.status, len(r.body))
	}
	wantError(t, "jpg for a PNG pack through the gateway", do(t, http.MethodGet, gw+"/edge/tiles/toner/0/0/0.jpg", nil, nil),
		http.StatusBadRequest, "bad_request")
}
