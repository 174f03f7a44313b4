package tiles

import (
	"errors"
	"strings"
)

// MaxZoom is the deepest zoom a tile URL may name.
const MaxZoom = 31

// maxDigits is the longest z, x or y accepted (docs/edge.md §6.1: 1–10 digits).
const maxDigits = 10

// Kinds of /tiles request.
const (
	reqNone     = iota // not a /tiles path this package serves: 404
	reqTile            // /tiles/{name}/{z}/{x}/{y}.{ext}
	reqTileJSON        // /tiles/{name}.json
)

// tileReq is a parsed /tiles path.
type tileReq struct {
	Name    string
	Z, X, Y uint32
	Ext     string
}

// errBadTile is a tile path of the right shape with an invalid part (400).
var errBadTile = errors.New("tiles: invalid tile path")

// parsePath classifies the escaped path of a /tiles request. A tile path
// has exactly four segments after "/tiles/"; one segment ending in ".json"
// (and a non-empty name) is TileJSON; anything else is reqNone. For a tile
// path with an invalid z, x, y or extension, err is errBadTile (400); the
// name is never decoded, so an escaped name matches no pack.
func parsePath(escaped string) (kind int, tr tileReq, err error) {
	rest, ok := strings.CutPrefix(escaped, "/tiles/")
	if !ok {
		return reqNone, tr, nil
	}
	if !strings.Contains(rest, "/") {
		name, ok := strings.CutSuffix(rest, ".json")
		if !ok || name == "" {
			return reqNone, tr, nil
		}
		return reqTileJSON, tileReq{Name: name}, nil
	}
	var seg [4]string
	for i := range 3 {
		var ok bool
		if seg[i], rest, ok = strings.Cut(rest, "/"); !ok {
			return reqNone, tr, nil
		}
	}
	seg[3] = rest
	if strings.Contains(rest, "/") || seg[0] == "" {
		return reqNone, tr, nil
	}
	tr, err = parseTile(seg[0], seg[1], seg[2], seg[3])
	return reqTile, tr, err
}

// parseTile checks the parts of /tiles/{name}/{z}/{x}/{y}.{ext}: z, x and y
// are 1–10 ASCII digits with z ≤ 31 and x, y < 2^z, and yext is y, a dot and
// a non-empty extension of ASCII letters and digits. Errors wrap
// errBadTile.
func parseTile(name, zs, xs, yext string) (tileReq, error) {
	ys, ext, ok := strings.Cut(yext, ".")
	if !ok || !validExt(ext) {
		return tileReq{}, errBadTile
	}
	z, okZ := parseCoord(zs)
	x, okX := parseCoord(xs)
	y, okY := parseCoord(ys)
	if !okZ || !okX || !okY || z > MaxZoom {
		return tileReq{}, errBadTile
	}
	if n := uint64(1) << z; x >= n || y >= n {
		return tileReq{}, errBadTile
	}
	return tileReq{Name: name, Z: uint32(z), X: uint32(x), Y: uint32(y), Ext: ext}, nil
}

// parseCoord parses 1–10 ASCII digits.
func parseCoord(s string) (uint64, bool) {
	if len(s) == 0 || len(s) > maxDigits {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// validExt reports whether ext is 1–16 ASCII letters and digits.
func validExt(ext string) bool {
	if len(ext) == 0 || len(ext) > 16 {
		return false
	}
	for i := 0; i < len(ext); i++ {
		c := ext[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// parsePacksPath classifies the escaped path of a /packs request: the
// listing, or the name of a raw archive ("/packs/{name}.pmtiles"). ok is
// false for anything else (404), including "/packs/{name}.mbtiles".
func parsePacksPath(escaped string) (listing bool, name string, ok bool) {
	if escaped == "/packs" {
		return true, "", true
	}
	rest, found := strings.CutPrefix(escaped, "/packs/")
	if !found || strings.Contains(rest, "/") {
		return false, "", false
	}
	name, found = strings.CutSuffix(rest, ".pmtiles")
	return false, name, found && name != ""
}
