// Command samplepack writes the small tile pack of the README's tour,
// examples/packs/world.pmtiles: the zoom 0–2 tiles of
// testdata/pmtiles/stamen_toner_z3.pmtiles (Stamen Toner raster tiles,
// CC BY 4.0; map data © OpenStreetMap contributors, ODbL) in a PMTiles v3
// archive whose metadata carries their name and attribution, so that the
// edge's TileJSON shows the attribution the licence asks for.
//
//	go run ./scripts/samplepack [-src FILE] [-out FILE] [-maxzoom N]
//
// The tiles are copied byte for byte; the archive layout is that of
// pmtilestest.Build (gzip directories, one run-length entry per repeat).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// Attribution is the credit line the tiles' licence requires wherever they
// are shown (HTML, as TileJSON consumers such as MapLibre expect).
const Attribution = `Map tiles by <a href="https://stamen.com">Stamen Design</a>, ` +
	`<a href="https://creativecommons.org/licenses/by/4.0/">CC BY 4.0</a>. ` +
	`Data © <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors, ODbL.`

// metadata is the archive's JSON metadata.
type metadata struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Attribution string `json:"attribution"`
	Version     string `json:"version"`
}

func main() {
	src := flag.String("src", "testdata/pmtiles/stamen_toner_z3.pmtiles", "the archive the tiles come from")
	out := flag.String("out", "examples/packs/world.pmtiles", "the archive to write")
	maxZoom := flag.Uint("maxzoom", 2, "the highest zoom level copied")
	flag.Parse()
	b, err := Build(*src, uint8(*maxZoom))
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "samplepack:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s (%d bytes)\n", *out, len(b))
}

// Build returns the sample archive: every tile of src up to maxZoom, with
// the sample's metadata.
func Build(src string, maxZoom uint8) ([]byte, error) {
	tiles, h, err := ReadTiles(src, maxZoom)
	if err != nil {
		return nil, err
	}
	meta, err := json.Marshal(metadata{
		Name:        "world",
		Description: fmt.Sprintf("Stamen Toner world map, zoom 0–%d: the sample pack of ron's README", maxZoom),
		Attribution: Attribution,
		Version:     "1",
	})
	if err != nil {
		return nil, err
	}
	return pmtilestest.Build(tiles, pmtilestest.Options{
		TileType: h.TileType, TileCompression: h.TileCompression, Metadata: meta,
	})
}

// ReadTiles returns every tile of the archive at path up to maxZoom (or its
// own maximum zoom, whichever is lower) in z, x, y order, with the
// archive's header.
func ReadTiles(path string, maxZoom uint8) ([]pmtilestest.Tile, pmtiles.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, pmtiles.Header{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, pmtiles.Header{}, err
	}
	ctx := context.Background()
	r, err := pmtiles.Open(ctx, f, st.Size(), pmtiles.Options{})
	if err != nil {
		return nil, pmtiles.Header{}, fmt.Errorf("%s: %w", path, err)
	}
	var tiles []pmtilestest.Tile
	for z := uint32(0); z <= uint32(min(maxZoom, r.Header().MaxZoom)); z++ {
		for x := uint32(0); x < 1<<z; x++ {
			for y := uint32(0); y < 1<<z; y++ {
				ref, ok, err := r.Tile(ctx, z, x, y)
				if err != nil {
					return nil, pmtiles.Header{}, err
				}
				if !ok {
					continue
				}
				data, err := r.ReadTile(ctx, ref)
				if err != nil {
					return nil, pmtiles.Header{}, err
				}
				tiles = append(tiles, pmtilestest.Tile{Z: z, X: x, Y: y, Data: data})
			}
		}
	}
	return tiles, r.Header(), nil
}
