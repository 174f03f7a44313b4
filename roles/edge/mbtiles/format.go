package mbtiles

import (
	"bytes"
	"strings"
)

// TileType is a pack's tile format (spec/edge.md §6.2). The values 0–6 equal
// the PMTiles v3 header tile-type codes so the role can treat both kinds of
// pack alike; TypeJSON has no PMTiles code.
type TileType uint8

// Tile types.
const (
	TypeUnknown TileType = 0
	TypeMVT     TileType = 1
	TypePNG     TileType = 2
	TypeJPEG    TileType = 3
	TypeWebP    TileType = 4
	TypeAVIF    TileType = 5
	TypeMLT     TileType = 6
	TypeJSON    TileType = 7
)

type typeInfo struct {
	name        string
	contentType string
	exts        []string
}

var typeInfos = [...]typeInfo{
	TypeUnknown: {"unknown", "application/octet-stream", nil},
	TypeMVT:     {"mvt", "application/vnd.mapbox-vector-tile", []string{"mvt", "pbf"}},
	TypePNG:     {"png", "image/png", []string{"png"}},
	TypeJPEG:    {"jpeg", "image/jpeg", []string{"jpg", "jpeg"}},
	TypeWebP:    {"webp", "image/webp", []string{"webp"}},
	TypeAVIF:    {"avif", "image/avif", []string{"avif"}},
	TypeMLT:     {"mlt", "application/vnd.maplibre-vector-tile", []string{"mlt"}},
	TypeJSON:    {"json", "application/json", []string{"json"}},
}

func (t TileType) info() typeInfo {
	if int(t) < len(typeInfos) {
		return typeInfos[t]
	}
	return typeInfos[TypeUnknown]
}

// String is the name used in the `/packs` listing's tile_type: unknown, mvt,
// png, jpeg, webp, avif, mlt or json. Values out of range read as unknown.
func (t TileType) String() string { return t.info().name }

// ContentType is the Content-Type of a tile of this type (§6.2).
func (t TileType) ContentType() string { return t.info().contentType }

// Extensions lists the URL extensions accepted for this type, the TileJSON
// one first. It is nil for TypeUnknown, which accepts any extension. The
// slice must not be modified.
func (t TileType) Extensions() []string { return t.info().exts }

// AcceptsExt reports whether a tile URL ending in .ext (without the dot,
// compared exactly) is valid for this type.
func (t TileType) AcceptsExt(ext string) bool {
	exts := t.Extensions()
	if exts == nil {
		return true
	}
	for _, e := range exts {
		if e == ext {
			return true
		}
	}
	return false
}

// TileJSONExt is the extension used in TileJSON tile URLs: the first of
// Extensions, or "bin" for TypeUnknown (§6.4).
func (t TileType) TileJSONExt() string {
	if exts := t.Extensions(); len(exts) > 0 {
		return exts[0]
	}
	return "bin"
}

// TypeFromFormat maps a metadata `format` value (trimmed, case-insensitive)
// to a tile type: pbf and mvt → MVT, png, jpg and jpeg → JPEG, webp, avif,
// mlt, json; anything else → TypeUnknown. ok is false when format is empty
// after trimming, meaning "no format": the type then comes from SniffType.
func TypeFromFormat(format string) (t TileType, ok bool) {
	f := strings.ToLower(strings.TrimSpace(format))
	switch f {
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

// sniffLen is how many leading tile bytes SniffType looks at.
const sniffLen = 12

var (
	magicPNG  = []byte{0x89, 'P', 'N', 'G'}
	magicJPEG = []byte{0xff, 0xd8, 0xff}
	magicGzip = []byte{0x1f, 0x8b}
)

// SniffType guesses a tile type from a tile's first bytes, for packs whose
// metadata has no format (§6.2): PNG (89 50 4E 47), JPEG (FF D8 FF), WebP
// ("RIFF", then "WEBP" at byte 8), gzip (1f 8b) → MVT; anything else,
// including no tile (nil), → TypeUnknown.
func SniffType(head []byte) TileType {
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

// Encoding is the coding a tile is stored with (§4.5, §6.3).
type Encoding uint8

// Tile encodings. MBTiles tiles are either gzip or stored as is.
const (
	EncodingNone Encoding = iota
	EncodingGzip
)

// ContentEncoding is the Content-Encoding value for a tile sent as stored:
// "gzip", or "" for EncodingNone.
func (e Encoding) ContentEncoding() string {
	if e == EncodingGzip {
		return "gzip"
	}
	return ""
}

// String is ContentEncoding, with "identity" for EncodingNone.
func (e Encoding) String() string {
	if e == EncodingGzip {
		return "gzip"
	}
	return "identity"
}

// EncodingOf reports how a tile is stored: gzip when its first bytes are
// 1f 8b, otherwise uncompressed (§4.5).
func EncodingOf(tile []byte) Encoding {
	if bytes.HasPrefix(tile, magicGzip) {
		return EncodingGzip
	}
	return EncodingNone
}
