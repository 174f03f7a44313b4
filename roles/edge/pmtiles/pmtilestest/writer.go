// Package pmtilestest builds PMTiles v3 archives for tests: leaf directories
// of any depth, every internal compression the reader decodes (none, gzip,
// brotli, zstd), every tile type and tile compression, run-length entries and
// deduplicated contents, plus the low-level pieces (directory encoding,
// assembling sections, header patching) that tests use to craft corrupt
// archives. It is test support: it favours clarity over speed.
package pmtilestest

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
	"github.com/ronhq/ron/roles/edge/pmtiles"
)

// Tile is one tile to write; Data is stored as given unless
// Options.CompressTiles is set.
type Tile struct {
	Z, X, Y uint32
	Data    []byte
}

// Options shapes the archive Build writes.
type Options struct {
	// InternalCompression of directories and metadata; 0 means gzip.
	InternalCompression pmtiles.Compression
	// TileCompression is written to the header; with CompressTiles the
	// tile data is compressed with it too.
	TileCompression pmtiles.Compression
	CompressTiles   bool
	TileType        pmtiles.TileType
	// Metadata is the raw metadata JSON; nil writes "{}"; an empty non-nil
	// slice writes a zero-length metadata section.
	Metadata []byte
	// LeafSize > 0 puts the tile entries into leaf directories of at most
	// LeafSize entries; LeafLevels (default 1 when LeafSize > 0) is how many
	// levels of leaves sit between the root and the tile entries.
	LeafSize   int
	LeafLevels int
}

// Build writes an archive holding tiles (any order; a repeated (z, x, y)
// keeps the last Data). Tiles with consecutive ids and equal bytes become
// one run-length entry; equal bytes elsewhere share one blob. The zoom range
// is that of the tiles (0–0 for none); bounds are the whole world.
func Build(tiles []Tile, opt Options) ([]byte, error) {
	if opt.InternalCompression == 0 {
		opt.InternalCompression = pmtiles.CompressionGzip
	}
	byID, h, err := collect(tiles, opt)
	if err != nil {
		return nil, err
	}
	entries, data, contents := layoutTiles(byID)
	root, leaves, err := buildDirs(entries, opt)
	if err != nil {
		return nil, err
	}
	meta := opt.Metadata
	if meta == nil {
		meta = []byte("{}")
	}
	if len(meta) > 0 {
		if meta, err = Compress(opt.InternalCompression, meta); err != nil {
			return nil, err
		}
	}
	h.TileEntries, h.TileContents = uint64(len(entries)), uint64(contents)
	for _, e := range entries {
		h.AddressedTiles += uint64(e.RunLength)
	}
	return Assemble(h, root, meta, leaves, data), nil
}

type idTile struct {
	id   uint64
	data []byte
}

// collect maps tiles to ids (compressing them when asked) and starts the
// header.
func collect(tiles []Tile, opt Options) ([]idTile, pmtiles.Header, error) {
	h := pmtiles.Header{
		InternalCompression: opt.InternalCompression, TileCompression: opt.TileCompression,
		TileType: opt.TileType, MinZoom: 255, Clustered: true,
		MinLonE7: -1800000000, MinLatE7: -850511287, MaxLonE7: 1800000000, MaxLatE7: 850511287,
	}
	m := map[uint64][]byte{}
	for _, t := range tiles {
		id, err := pmtiles.TileID(t.Z, t.X, t.Y)
		if err != nil {
			return nil, h, err
		}
		d := t.Data
		if opt.CompressTiles {
			if d, err = Compress(opt.TileCompression, d); err != nil {
				return nil, h, err
			}
		}
		m[id] = d
		h.MinZoom, h.MaxZoom = min(h.MinZoom, uint8(t.Z)), max(h.MaxZoom, uint8(t.Z))
	}
	if len(tiles) == 0 {
		h.MinZoom = 0
	}
	h.CenterZoom = h.MinZoom
	out := make([]idTile, 0, len(m))
	for id, d := range m {
		out = append(out, idTile{id, d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, h, nil
}

// layoutTiles writes the tile-data section and its entries.
func layoutTiles(ts []idTile) (entries []pmtiles.Entry, data []byte, contents int) {
	blobs := map[string]uint64{}
	for _, t := range ts {
		if n := len(entries); n > 0 {
			last := &entries[n-1]
			if last.TileID+uint64(last.RunLength) == t.id && bytes.Equal(data[last.Offset:last.Offset+uint64(last.Length)], t.data) {
				last.RunLength++
				continue
			}
		}
		off, ok := blobs[string(t.data)]
		if !ok {
			off = uint64(len(data))
			blobs[string(t.data)] = off
			data = append(data, t.data...)
		}
		entries = append(entries, pmtiles.Entry{TileID: t.id, Offset: off, Length: uint32(len(t.data)), RunLength: 1})
	}
	return entries, data, len(blobs)
}

// buildDirs returns the compressed root and leaf section for entries.
func buildDirs(entries []pmtiles.Entry, opt Options) (root, leaves []byte, err error) {
	levels := opt.LeafLevels
	if opt.LeafSize > 0 && levels == 0 {
		levels = 1
	}
	level := entries
	for l := 0; l < levels; l++ {
		var parents []pmtiles.Entry
		for i := 0; i < len(level); i += opt.LeafSize {
			chunk := level[i:min(i+opt.LeafSize, len(level))]
			enc, err := Compress(opt.InternalCompression, EncodeDirectory(chunk))
			if err != nil {
				return nil, nil, err
			}
			parents = append(parents, pmtiles.Entry{TileID: chunk[0].TileID, Offset: uint64(len(leaves)), Length: uint32(len(enc))})
			leaves = append(leaves, enc...)
		}
		level = parents
	}
	root, err = Compress(opt.InternalCompression, EncodeDirectory(level))
	return root, leaves, err
}

// EncodeDirectory encodes es (uncompressed) as the specification's
// appendix A.1 does: count, id deltas, run lengths, lengths, offsets (0 when
// contiguous with the previous entry, else offset + 1). es must be sorted by
// TileID.
func EncodeDirectory(es []pmtiles.Entry) []byte {
	b := binary.AppendUvarint(nil, uint64(len(es)))
	var last uint64
	for _, e := range es {
		b = binary.AppendUvarint(b, e.TileID-last)
		last = e.TileID
	}
	for _, e := range es {
		b = binary.AppendUvarint(b, uint64(e.RunLength))
	}
	for _, e := range es {
		b = binary.AppendUvarint(b, uint64(e.Length))
	}
	var next uint64
	for i, e := range es {
		if i > 0 && e.Offset == next {
			b = binary.AppendUvarint(b, 0)
		} else {
			b = binary.AppendUvarint(b, e.Offset+1)
		}
		next = e.Offset + uint64(e.Length)
	}
	return b
}

// Compress compresses b with c: none, gzip, brotli or zstd. Other codes
// (unknown, 5+) are an error.
func Compress(c pmtiles.Compression, b []byte) ([]byte, error) {
	var buf bytes.Buffer
	switch c {
	case pmtiles.CompressionNone:
		return append([]byte(nil), b...), nil
	case pmtiles.CompressionGzip:
		w := gzip.NewWriter(&buf)
		_, _ = w.Write(b)
		if err := w.Close(); err != nil {
			return nil, err
		}
	case pmtiles.CompressionBrotli:
		w := brotli.NewWriter(&buf)
		_, _ = w.Write(b)
		if err := w.Close(); err != nil {
			return nil, err
		}
	case pmtiles.CompressionZstd:
		w, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		_, _ = w.Write(b)
		if err := w.Close(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("pmtilestest: cannot compress with %s", c)
	}
	return buf.Bytes(), nil
}

// Assemble lays out header | root | metadata | leaves | data, setting the
// section offsets and lengths in h (other fields are written as given).
func Assemble(h pmtiles.Header, root, meta, leaves, data []byte) []byte {
	h.RootOffset, h.RootLength = pmtiles.HeaderSize, uint64(len(root))
	h.MetadataOffset, h.MetadataLength = h.RootOffset+h.RootLength, uint64(len(meta))
	h.LeafOffset, h.LeafLength = h.MetadataOffset+h.MetadataLength, uint64(len(leaves))
	h.TileDataOffset, h.TileDataLength = h.LeafOffset+h.LeafLength, uint64(len(data))
	out, _ := h.MarshalBinary()
	for _, s := range [][]byte{root, meta, leaves, data} {
		out = append(out, s...)
	}
	return out
}

// PatchHeader returns a copy of archive with its header changed by fn. The
// archive's header must parse.
func PatchHeader(archive []byte, fn func(*pmtiles.Header)) []byte {
	h, err := pmtiles.ParseHeader(archive)
	if err != nil {
		panic(fmt.Sprintf("pmtilestest: PatchHeader on a bad header: %v", err))
	}
	fn(&h)
	hb, _ := h.MarshalBinary()
	out := append([]byte(nil), archive...)
	copy(out, hb)
	return out
}
