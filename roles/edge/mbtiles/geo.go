package mbtiles

import (
	"math"
	"strconv"
	"strings"
)

// MaxZoom is the highest zoom level a tile can have (docs/edge.md §6.1).
const MaxZoom = 31

// Bounds is a west, south, east, north extent in WGS 84 degrees.
type Bounds struct {
	West, South, East, North float64
}

// DefaultBounds is the Web Mercator world extent used when a pack's metadata
// has no valid bounds (docs/edge.md §6.4).
var DefaultBounds = Bounds{West: -180, South: -85.05112878, East: 180, North: 85.05112878}

// Array returns b as the TileJSON [w, s, e, n].
func (b Bounds) Array() [4]float64 { return [4]float64{b.West, b.South, b.East, b.North} }

// Mid returns the centre point of b.
func (b Bounds) Mid() (lon, lat float64) {
	return (b.West + b.East) / 2, (b.South + b.North) / 2
}

// Center is a TileJSON center: longitude, latitude and zoom.
type Center struct {
	Lon, Lat float64
	Zoom     int
}

// Array returns c as the TileJSON [lon, lat, zoom].
func (c Center) Array() [3]float64 { return [3]float64{c.Lon, c.Lat, float64(c.Zoom)} }

// parseFloats splits s at commas into exactly n finite numbers.
func parseFloats(s string, n int) ([]float64, bool) {
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return nil, false
	}
	out := make([]float64, n)
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

func validLon(v float64) bool { return v >= -180 && v <= 180 }
func validLat(v float64) bool { return v >= -90 && v <= 90 }

// ParseBounds parses metadata bounds "w,s,e,n" (spaces around numbers
// allowed). It requires finite numbers, longitudes in [-180, 180], latitudes
// in [-90, 90], w ≤ e and s ≤ n; ok is false otherwise.
func ParseBounds(s string) (b Bounds, ok bool) {
	v, ok := parseFloats(s, 4)
	if !ok {
		return Bounds{}, false
	}
	b = Bounds{West: v[0], South: v[1], East: v[2], North: v[3]}
	if !validLon(b.West) || !validLon(b.East) || !validLat(b.South) || !validLat(b.North) ||
		b.West > b.East || b.South > b.North {
		return Bounds{}, false
	}
	return b, true
}

// ParseCenter parses metadata center "lon,lat" or "lon,lat,z". The zoom, when
// present, must be an integer in [0, MaxZoom] (a number with a zero fraction,
// such as "6.0", is accepted); hasZoom reports whether it was present. ok is
// false for anything else or a point outside [-180, 180] × [-90, 90].
func ParseCenter(s string) (c Center, hasZoom, ok bool) {
	v, ok := parseFloats(s, 3)
	if !ok {
		if v, ok = parseFloats(s, 2); !ok {
			return Center{}, false, false
		}
	}
	if !validLon(v[0]) || !validLat(v[1]) {
		return Center{}, false, false
	}
	c = Center{Lon: v[0], Lat: v[1]}
	if len(v) == 2 {
		return c, false, true
	}
	z := v[2]
	if z != math.Trunc(z) || z < 0 || z > MaxZoom {
		return Center{}, false, false
	}
	c.Zoom = int(z)
	return c, true, true
}

// parseZoom parses a metadata minzoom/maxzoom value: a decimal integer in
// [0, MaxZoom], surrounding spaces allowed.
func parseZoom(s string) (int, bool) {
	z, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || z < 0 || z > MaxZoom {
		return 0, false
	}
	return z, true
}

// clampZoom limits z to [lo, hi].
func clampZoom(z, lo, hi int) int { return min(max(z, lo), hi) }
