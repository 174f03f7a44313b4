package packs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/tiletype"
)

// Info is what `ron pack inspect` prints about a pack.
type Info struct {
	Name        string     `json:"name"`
	Kind        Kind       `json:"kind"`
	Path        string     `json:"path"`
	Bytes       int64      `json:"bytes"`
	ModTime     time.Time  `json:"mtime"`
	ID          string     `json:"id"`
	TileType    string     `json:"tile_type"`
	ContentType string     `json:"content_type"`
	Compression string     `json:"tile_compression"` // PMTiles: the header's; MBTiles: gzip, none or mixed
	MinZoom     int        `json:"minzoom"`
	MaxZoom     int        `json:"maxzoom"`
	Bounds      [4]float64 `json:"bounds"`
	Center      [3]float64 `json:"center"`
	// Entries counts tile entries (PMTiles: directory entries with a run
	// length; MBTiles: rows), Tiles the tiles they address (PMTiles: the
	// sum of run lengths), Contents the distinct tile blobs (PMTiles).
	Entries     int64           `json:"entries"`
	Tiles       int64           `json:"tiles"`
	Contents    int64           `json:"contents,omitempty"`
	RootEntries int             `json:"root_entries,omitempty"`
	Header      *HeaderInfo     `json:"header,omitempty"`
	Metadata    json.RawMessage `json:"metadata"`
	Warnings    []string        `json:"warnings,omitempty"`
}

// HeaderInfo is a PMTiles header as printed (docs/edge.md §5): offsets and lengths, the
// informative counts, and the decoded enums and positions.
type HeaderInfo struct {
	Version             uint8      `json:"version"`
	RootOffset          uint64     `json:"root_offset"`
	RootLength          uint64     `json:"root_length"`
	MetadataOffset      uint64     `json:"metadata_offset"`
	MetadataLength      uint64     `json:"metadata_length"`
	LeafOffset          uint64     `json:"leaf_dirs_offset"`
	LeafLength          uint64     `json:"leaf_dirs_length"`
	TileDataOffset      uint64     `json:"tile_data_offset"`
	TileDataLength      uint64     `json:"tile_data_length"`
	AddressedTiles      uint64     `json:"addressed_tiles"`
	TileEntries         uint64     `json:"tile_entries"`
	TileContents        uint64     `json:"tile_contents"`
	Clustered           bool       `json:"clustered"`
	InternalCompression string     `json:"internal_compression"`
	TileCompression     string     `json:"tile_compression"`
	TileType            string     `json:"tile_type"`
	MinZoom             uint8      `json:"min_zoom"`
	MaxZoom             uint8      `json:"max_zoom"`
	Bounds              [4]float64 `json:"bounds"`
	Center              [3]float64 `json:"center"`
}

// Inspect describes the pack, counting its entries and tiles (it walks every
// PMTiles directory or reads the MBTiles tiles index, so it is not for the
// serving path). Errors wrap ErrCorrupt when a directory turns out corrupt.
func (p *Pack) Inspect(ctx context.Context) (Info, error) {
	in := Info{Name: p.name, Kind: p.kind, Path: p.path, Bytes: p.Size(), ModTime: p.ModTime(), ID: p.id,
		TileType: p.tileType.String(), ContentType: p.tileType.ContentType(), MinZoom: p.minZoom, MaxZoom: p.maxZoom,
		Bounds: p.bounds, Center: p.center, Metadata: p.metaJSON, Warnings: p.Warnings()}
	var err error
	if p.kind == KindMBTiles {
		err = p.inspectMBTiles(ctx, &in)
	} else {
		err = p.inspectPMTiles(ctx, &in)
	}
	if err != nil {
		return Info{}, p.failed(err)
	}
	return in, nil
}

// inspectMBTiles counts the rows and how many are gzip-compressed.
func (p *Pack) inspectMBTiles(ctx context.Context, in *Info) error {
	st, err := p.mb.Stats(ctx)
	if err != nil {
		return err
	}
	in.Entries, in.Tiles = st.Tiles, st.Tiles
	switch st.GzipTiles {
	case 0:
		in.Compression = tiletype.None.String()
	case st.Tiles:
		in.Compression = tiletype.Gzip.String()
	default:
		in.Compression = fmt.Sprintf("mixed (%d of %d tiles gzip)", st.GzipTiles, st.Tiles)
	}
	return nil
}

// inspectPMTiles walks every directory, counting entries, addressed tiles
// and distinct blobs.
func (p *Pack) inspectPMTiles(ctx context.Context, in *Info) error {
	h := p.pm.Header()
	in.Compression = h.TileCompression.String()
	in.Header = headerInfo(h)
	in.RootEntries = len(p.pm.RootEntries())
	blobs := map[uint64]bool{}
	err := p.pm.Entries(ctx, func(e pmtiles.Entry) error {
		in.Entries++
		in.Tiles += int64(e.RunLength)
		blobs[e.Offset] = true
		return nil
	})
	in.Contents = int64(len(blobs))
	return err
}

// headerInfo converts a PMTiles header for printing.
func headerInfo(h pmtiles.Header) *HeaderInfo {
	w, s, e, n := h.Bounds()
	lon, lat, z := h.Center()
	return &HeaderInfo{Version: h.Version, RootOffset: h.RootOffset, RootLength: h.RootLength,
		MetadataOffset: h.MetadataOffset, MetadataLength: h.MetadataLength, LeafOffset: h.LeafOffset,
		LeafLength: h.LeafLength, TileDataOffset: h.TileDataOffset, TileDataLength: h.TileDataLength,
		AddressedTiles: h.AddressedTiles, TileEntries: h.TileEntries, TileContents: h.TileContents,
		Clustered: h.Clustered, InternalCompression: h.InternalCompression.String(),
		TileCompression: h.TileCompression.String(), TileType: h.TileType.String(), MinZoom: h.MinZoom,
		MaxZoom: h.MaxZoom, Bounds: [4]float64{w, s, e, n}, Center: [3]float64{lon, lat, float64(z)}}
}
