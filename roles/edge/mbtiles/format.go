package mbtiles

import "github.com/ronhq/ron/roles/edge/tiletype"

// TileType is a pack's tile format: the shared docs/edge.md §6.2 type of package
// tiletype (values 0–6 equal the PMTiles header codes; TypeJSON is
// MBTiles-only).
type TileType = tiletype.Type

// Tile types (aliases of the tiletype constants).
const (
	TypeUnknown = tiletype.TypeUnknown
	TypeMVT     = tiletype.TypeMVT
	TypePNG     = tiletype.TypePNG
	TypeJPEG    = tiletype.TypeJPEG
	TypeWebP    = tiletype.TypeWebP
	TypeAVIF    = tiletype.TypeAVIF
	TypeMLT     = tiletype.TypeMLT
	TypeJSON    = tiletype.TypeJSON
)

// TypeFromFormat maps a metadata `format` value to a tile type
// (tiletype.FromMBTilesFormat): ok is false when there is no format, and the
// type then comes from SniffType.
func TypeFromFormat(format string) (t TileType, ok bool) { return tiletype.FromMBTilesFormat(format) }

// SniffType guesses a tile type from a tile's first bytes (tiletype.Sniff),
// for packs whose metadata has no format (docs/edge.md §6.2).
func SniffType(head []byte) TileType { return tiletype.Sniff(head) }

// Encoding is the coding a tile is stored with (docs/edge.md §4.5, docs/edge.md §6.3): MBTiles tiles
// are either gzip or stored as is.
type Encoding = tiletype.Coding

// Tile encodings.
const (
	EncodingNone = tiletype.None
	EncodingGzip = tiletype.Gzip
)

// EncodingOf reports how a tile is stored: gzip when its first bytes are
// 1f 8b, otherwise uncompressed (docs/edge.md §4.5; tiletype.SniffCoding).
func EncodingOf(tile []byte) Encoding { return tiletype.SniffCoding(tile) }
