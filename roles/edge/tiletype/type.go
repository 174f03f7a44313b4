package tiletype

import (
	"bytes"
	"slices"
	"strings"
)

// Type is a pack's tile type (docs/edge.md §6.2). 0–6 are the PMTiles v3
// tile-type codes; JSON is MBTiles-only.
type Type uint8

// Tile types.
const (
	TypeUnknown Type = 0
	TypeMVT     Type = 1
	TypePNG     Type = 2
	TypeJPEG    Type = 3
	TypeWebP    Type = 4
	TypeAVIF    Type = 5
	TypeMLT     Type = 6
	TypeJSON    Type = 7
)

type typeInfo struct {
	name        string
	contentType string
	exts        []string
}

// types is the docs/edge.md §6.2 table; an index out of range reads as TypeUnknown.
var types = [...]typeInfo{
	TypeUnknown: {"unknown", "application/octet-stream", nil},
	TypeMVT:     {"mvt", "application/vnd.mapbox-vector-tile", []string{"mvt", "pbf"}},
	TypePNG:     {"png", "image/png", []string{"png"}},
	TypeJPEG:    {"jpeg", "image/jpeg", []string{"jpg", "jpeg"}},
	TypeWebP:    {"webp", "image/webp", []string{"webp"}},
	TypeAVIF:    {"avif", "image/avif", []string{"avif"}},
	TypeMLT:     {"mlt", "application/vnd.maplibre-vector-tile", []string{"mlt"}},
	TypeJSON:    {"json", "application/json", []string{"json"}},
}

func (t Type) info() typeInfo {
	if int(t) < len(types) {
		return types[t]
	}
	return types[TypeUnknown]
}

// String is the name used in listings (the `/packs` tile_type): unknown,
// mvt, png, jpeg, webp, avif, mlt or json. Values out of range read as
// unknown.
func (t Type) String() string { return t.info().name }

// ContentType is the Content-Type of a tile of this type
// (application/octet-stream for TypeUnknown).
func (t Type) ContentType() string { return t.info().contentType }

// Extensions lists the URL extensions accepted for this type, the TileJSON
// one first. It is nil for TypeUnknown, which accepts any extension. The slice
// must not be modified.
func (t Type) Extensions() []string { return t.info().exts }

// AcceptsExt reports whether a tile URL ending in .ext (without the dot,
// compared exactly) is valid for this type; TypeUnknown accepts any.
func (t Type) AcceptsExt(ext string) bool {
	exts := t.Extensions()
	return exts == nil || slices.Contains(exts, ext)
}

// TileJSONExt is the extension used in TileJSON tile URLs: the first of
// Extensions, or "bin" for TypeUnknown (docs/edge.md §6.4).
func (t Type) TileJSONExt() string {
	if exts := t.Extensions(); len(exts) > 0 {
		return exts[0]
	}
	return "bin"
}

// FromMBTilesFormat maps an MBTiles metadata `format` value (trimmed,
// case-insensitive) to a type: pbf and mvt → MVT, png → PNG, jpg and jpeg →
// JPEG, webp, avif, mlt, json; anything else → TypeUnknown. ok is false when
// format is empty after trimming, meaning "no format": the type then comes
// from Sniff.
func FromMBTilesFormat(format string) (t Type, ok bool) {
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "":
		return TypeUnknown, false
	case "pbf", "mvt":
		return TypeMVT, true
	case "png":
		return TypePNG, true
	case "jpg", "jpeg":
		return TypeJPEG, true
	case "webp":
		return TypeWebP, true
	case "avif":
		return TypeAVIF, true
	case "mlt":
		return TypeMLT, true
	case "json":
		return TypeJSON, true
	}
	return TypeUnknown, true
}

// SniffLen is how many leading tile bytes Sniff looks at.
const SniffLen = 12

var (
	magicPNG  = []byte{0x89, 'P', 'N', 'G'}
	magicJPEG = []byte{0xff, 0xd8, 0xff}
	magicGzip = []byte{0x1f, 0x8b}
)

// Sniff guesses a tile type from a tile's first bytes, for MBTiles packs
// whose metadata has no format (docs/edge.md §6.2): PNG (89 50 4E 47), JPEG (FF D8 FF),
// WebP ("RIFF", then "WEBP" at byte 8), gzip (1f 8b) → MVT; anything else,
// including no tile (nil), → TypeUnknown.
func Sniff(head []byte) Type {
	switch {
	case bytes.HasPrefix(head, magicPNG):
		return TypePNG
	case bytes.HasPrefix(head, magicJPEG):
		return TypeJPEG
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return TypeWebP
	case bytes.HasPrefix(head, magicGzip):
		return TypeMVT
	}
	return TypeUnknown
}
