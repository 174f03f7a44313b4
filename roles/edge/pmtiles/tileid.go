package pmtiles

import "fmt"

// zoomBase returns the id of the first tile of zoom z: (4^z − 1) / 3.
func zoomBase(z uint32) uint64 {
	return ((uint64(1) << (2 * z)) - 1) / 3
}

// maxTileID is the id of the last tile at zoom 31.
var maxTileID = zoomBase(MaxZoom+1) - 1

// TileID returns the PMTiles tile id of (z, x, y): (4^z − 1)/3 plus the
// Hilbert index of (x, y) on the 2^z × 2^z grid (docs/edge.md §5). It returns
// ErrInvalidTile when z > 31 or x or y ≥ 2^z.
func TileID(z, x, y uint32) (uint64, error) {
	if z > MaxZoom {
		return 0, fmt.Errorf("%w: z %d", ErrInvalidTile, z)
	}
	n := uint64(1) << z
	if uint64(x) >= n || uint64(y) >= n {
		return 0, fmt.Errorf("%w: %d/%d/%d", ErrInvalidTile, z, x, y)
	}
	return zoomBase(z) + hilbertD(n, uint64(x), uint64(y)), nil
}

// hilbertD is the Hilbert index of (x, y) on an n × n grid (n a power of 2).
func hilbertD(n, x, y uint64) uint64 {
	var d uint64
	for s := n / 2; s > 0; s /= 2 {
		var rx, ry uint64
		if x&s != 0 {
			rx = 1
		}
		if y&s != 0 {
			ry = 1
		}
		d += s * s * ((3 * rx) ^ ry)
		x, y = rotate(n, x, y, rx, ry)
	}
	return d
}

// rotate applies the Hilbert quadrant rotation on an n × n grid.
func rotate(n, x, y, rx, ry uint64) (uint64, uint64) {
	if ry == 0 {
		if rx == 1 {
			x, y = n-1-x, n-1-y
		}
		x, y = y, x
	}
	return x, y
}

// TileZXY is the inverse of TileID. It returns ErrInvalidTile for ids above
// the last tile of zoom 31.
func TileZXY(id uint64) (z, x, y uint32, err error) {
	if id > maxTileID {
		return 0, 0, 0, fmt.Errorf("%w: id %d", ErrInvalidTile, id)
	}
	for z = 0; zoomBase(z+1) <= id; z++ {
	}
	t := id - zoomBase(z)
	n := uint64(1) << z
	var ux, uy uint64
	for s := uint64(1); s < n; s *= 2 {
		rx := 1 & (t / 2)
		ry := 1 & (t ^ rx)
		ux, uy = rotate(s, ux, uy, rx, ry)
		ux += s * rx
		uy += s * ry
		t /= 4
	}
	return z, uint32(ux), uint32(uy), nil
}
