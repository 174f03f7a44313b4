package pmtiles

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ronhq/ron/roles/edge/tiletype"
)

// HeaderSize is the fixed size of a PMTiles v3 header.
const HeaderSize = 127

// Version is the only archive version this package reads.
const Version = 3

// RootLimit is the byte every root directory should end before: browser
// clients fetch the first 16 KiB of an archive. A root ending later is valid
// but reported by Reader.Warnings.
const RootLimit = 16384

// MaxZoom is the highest zoom level a tile id can address.
const MaxZoom = 31

var magic = []byte("PMTiles")

// Compression is a PMTiles compression code (header bytes 97 and 98).
type Compression uint8

// Compression codes of the specification (PMTiles v3 §3.3).
const (
	CompressionUnknown Compression = 0
	CompressionNone    Compression = 1
	CompressionGzip    Compression = 2
	CompressionBrotli  Compression = 3
	CompressionZstd    Compression = 4
)

// String returns "unknown", "none", "gzip", "brotli", "zstd", or "code N"
// for other values.
func (c Compression) String() string {
	switch c {
	case CompressionUnknown:
		return "unknown"
	case CompressionNone:
		return "none"
	case CompressionGzip:
		return "gzip"
	case CompressionBrotli:
		return "brotli"
	case CompressionZstd:
		return "zstd"
	}
	return fmt.Sprintf("code %d", uint8(c))
}

// Coding maps c to the tile coding of docs/edge.md §6.3: none, gzip,
// brotli, zstd; 0 and codes above 4 are tiletype.Unknown.
func (c Compression) Coding() tiletype.Coding {
	switch c {
	case CompressionNone:
		return tiletype.None
	case CompressionGzip:
		return tiletype.Gzip
	case CompressionBrotli:
		return tiletype.Brotli
	case CompressionZstd:
		return tiletype.Zstd
	}
	return tiletype.Unknown
}

// ContentEncoding returns the HTTP content coding of c ("gzip", "br",
// "zstd"), or "" when bytes stored with c are sent without one (none,
// unknown): c.Coding().ContentEncoding().
func (c Compression) ContentEncoding() string { return c.Coding().ContentEncoding() }

// TileType is the PMTiles tile type (header byte 99).
type TileType uint8

// Tile types of the specification (PMTiles v3 §3.2).
const (
	TileTypeUnknown TileType = 0
	TileTypeMVT     TileType = 1
	TileTypePNG     TileType = 2
	TileTypeJPEG    TileType = 3
	TileTypeWebP    TileType = 4
	TileTypeAVIF    TileType = 5
	TileTypeMLT     TileType = 6
)

// Type maps the header code to the shared tile type of docs/edge.md §6.2
// (codes 0–6 are equal; codes above 6 are tiletype.TypeUnknown).
func (t TileType) Type() tiletype.Type {
	if t <= TileTypeMLT {
		return tiletype.Type(t)
	}
	return tiletype.TypeUnknown
}

// String returns "unknown", "mvt", "png", "jpeg", "webp", "avif" or "mlt";
// codes above 6 are "unknown" (the header keeps the raw value).
func (t TileType) String() string { return t.Type().String() }

// Header is a decoded PMTiles v3 header. Offsets are relative to the start
// of the file; positions are degrees × 10⁷ as stored.
type Header struct {
	Version        uint8
	RootOffset     uint64
	RootLength     uint64
	MetadataOffset uint64
	MetadataLength uint64
	LeafOffset     uint64
	LeafLength     uint64
	TileDataOffset uint64
	TileDataLength uint64
	// AddressedTiles, TileEntries and TileContents are informative counts;
	// 0 means unknown. They are not checked against the directories.
	AddressedTiles      uint64
	TileEntries         uint64
	TileContents        uint64
	Clustered           bool
	InternalCompression Compression
	TileCompression     Compression
	TileType            TileType
	MinZoom             uint8
	MaxZoom             uint8
	MinLonE7            int32
	MinLatE7            int32
	MaxLonE7            int32
	MaxLatE7            int32
	CenterZoom          uint8
	CenterLonE7         int32
	CenterLatE7         int32
}

// ParseHeader decodes the first HeaderSize bytes of b and checks every rule
// that needs no knowledge of the file size: length (ErrShort), magic
// (ErrBadMagic), version (ErrFutureVersion above 3, ErrOldVersion below),
// min_zoom ≤ max_zoom ≤ 31 (ErrZoom), internal compression 1–4 and tile
// compression 0–4 (ErrCompressionCode), and that no section's offset +
// length overflows an int64 (ErrSection). Use CheckBounds for the file size.
// Tile type, clustered and center fields are accepted as they are.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: %d bytes", ErrShort, len(b))
	}
	if !bytes.Equal(b[:7], magic) {
		return Header{}, ErrBadMagic
	}
	h := decodeHeader(b)
	if h.Version > Version {
		return h, fmt.Errorf("%w: %d", ErrFutureVersion, h.Version)
	}
	if h.Version < Version {
		return h, fmt.Errorf("%w: %d", ErrOldVersion, h.Version)
	}
	return h, h.check()
}

func decodeHeader(b []byte) Header {
	u64 := func(off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	i32 := func(off int) int32 { return int32(binary.LittleEndian.Uint32(b[off:])) }
	return Header{
		Version:    b[7],
		RootOffset: u64(8), RootLength: u64(16),
		MetadataOffset: u64(24), MetadataLength: u64(32),
		LeafOffset: u64(40), LeafLength: u64(48),
		TileDataOffset: u64(56), TileDataLength: u64(64),
		AddressedTiles: u64(72), TileEntries: u64(80), TileContents: u64(88),
		Clustered:           b[96] != 0,
		InternalCompression: Compression(b[97]),
		TileCompression:     Compression(b[98]),
		TileType:            TileType(b[99]),
		MinZoom:             b[100], MaxZoom: b[101],
		MinLonE7: i32(102), MinLatE7: i32(106), MaxLonE7: i32(110), MaxLatE7: i32(114),
		CenterZoom:  b[118],
		CenterLonE7: i32(119), CenterLatE7: i32(123),
	}
}

// check applies the size-independent rules after the version check.
func (h Header) check() error {
	if h.MinZoom > h.MaxZoom || h.MaxZoom > MaxZoom {
		return fmt.Errorf("%w: min %d, max %d", ErrZoom, h.MinZoom, h.MaxZoom)
	}
	if h.InternalCompression < CompressionNone || h.InternalCompression > CompressionZstd {
		return fmt.Errorf("%w: internal compression %d", ErrCompressionCode, h.InternalCompression)
	}
	if h.TileCompression > CompressionZstd {
		return fmt.Errorf("%w: tile compression %d", ErrCompressionCode, h.TileCompression)
	}
	for _, s := range h.sections() {
		if _, ok := sectionEnd(s.off, s.n); !ok {
			return fmt.Errorf("%w: %s offset %d + length %d overflows", ErrSection, s.name, s.off, s.n)
		}
	}
	return nil
}

type section struct {
	name   string
	off, n uint64
}

func (h Header) sections() [4]section {
	return [4]section{
		{"root directory", h.RootOffset, h.RootLength},
		{"metadata", h.MetadataOffset, h.MetadataLength},
		{"leaf directories", h.LeafOffset, h.LeafLength},
		{"tile data", h.TileDataOffset, h.TileDataLength},
	}
}

// sectionEnd returns off + n when it fits in an int64.
func sectionEnd(off, n uint64) (uint64, bool) {
	end := off + n
	if end < off || end > math.MaxInt64 {
		return 0, false
	}
	return end, true
}

// CheckBounds reports ErrSection when a section (root, metadata, leaf
// directories, tile data) does not lie within a file of size bytes, or
// ErrShort when size < HeaderSize. A zero-length section is within the file
// when its offset is ≤ size (offset 0 always is).
func (h Header) CheckBounds(size int64) error {
	if size < HeaderSize {
		return fmt.Errorf("%w: %d bytes", ErrShort, size)
	}
	for _, s := range h.sections() {
		end, ok := sectionEnd(s.off, s.n)
		if !ok || end > uint64(size) {
			return fmt.Errorf("%w: %s [%d, +%d) beyond %d bytes", ErrSection, s.name, s.off, s.n, size)
		}
	}
	return nil
}

// RootInFirst16K reports whether the root directory ends at or before
// RootLimit, as the specification requires of writers.
func (h Header) RootInFirst16K() bool {
	end, ok := sectionEnd(h.RootOffset, h.RootLength)
	return ok && end <= RootLimit
}

// Bounds returns the bounds in degrees.
func (h Header) Bounds() (minLon, minLat, maxLon, maxLat float64) {
	return e7(h.MinLonE7), e7(h.MinLatE7), e7(h.MaxLonE7), e7(h.MaxLatE7)
}

// Center returns the center position in degrees and the center zoom, as
// stored (not clamped into the zoom range).
func (h Header) Center() (lon, lat float64, zoom uint8) {
	return e7(h.CenterLonE7), e7(h.CenterLatE7), h.CenterZoom
}

func e7(v int32) float64 { return float64(v) / 1e7 }

// MarshalBinary encodes h as the 127-byte header with the magic; Version 0
// is written as 3. It never fails.
func (h Header) MarshalBinary() ([]byte, error) {
	b := make([]byte, HeaderSize)
	copy(b, magic)
	b[7] = h.Version
	if b[7] == 0 {
		b[7] = Version
	}
	for i, v := range []uint64{h.RootOffset, h.RootLength, h.MetadataOffset, h.MetadataLength,
		h.LeafOffset, h.LeafLength, h.TileDataOffset, h.TileDataLength,
		h.AddressedTiles, h.TileEntries, h.TileContents} {
		binary.LittleEndian.PutUint64(b[8+8*i:], v)
	}
	if h.Clustered {
		b[96] = 1
	}
	b[97], b[98], b[99] = byte(h.InternalCompression), byte(h.TileCompression), byte(h.TileType)
	b[100], b[101], b[118] = h.MinZoom, h.MaxZoom, h.CenterZoom
	for off, v := range map[int]int32{102: h.MinLonE7, 106: h.MinLatE7, 110: h.MaxLonE7,
		114: h.MaxLatE7, 119: h.CenterLonE7, 123: h.CenterLatE7} {
		binary.LittleEndian.PutUint32(b[off:], uint32(v))
	}
	return b, nil
}
