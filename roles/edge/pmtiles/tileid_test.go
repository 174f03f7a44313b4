package pmtiles_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ronhq/ron/roles/edge/pmtiles"
)

// The vectors of docs/edge.md §5 (and PMTiles v3 §4.1), both ways.
func TestTileIDVectors(t *testing.T) {
	for _, v := range []struct {
		z, x, y uint32
		id      uint64
	}{
		{0, 0, 0, 0}, {1, 0, 0, 1}, {1, 0, 1, 2}, {1, 1, 1, 3}, {1, 1, 0, 4}, {2, 0, 0, 5},
		{12, 3423, 1763, 19078479},
	} {
		id, err := pmtiles.TileID(v.z, v.x, v.y)
		if err != nil || id != v.id {
			t.Errorf("TileID(%d,%d,%d) = %d, %v; want %d", v.z, v.x, v.y, id, err, v.id)
		}
		z, x, y, err := pmtiles.TileZXY(v.id)
		if err != nil || z != v.z || x != v.x || y != v.y {
			t.Errorf("TileZXY(%d) = %d/%d/%d, %v", v.id, z, x, y, err)
		}
	}
}

// Zooms 0–4 exhaustively: ids of zoom z are exactly (4^z−1)/3 … (4^(z+1)−1)/3 − 1,
// every one used once, consecutive ids are grid neighbours (the Hilbert
// property, checked independently of the formula), and TileZXY inverts.
func TestTileIDExhaustiveLowZooms(t *testing.T) {
	seen := map[uint64]bool{}
	for z := uint32(0); z <= 4; z++ {
		n := uint32(1) << z
		pos := make(map[uint64][2]uint32)
		for x := uint32(0); x < n; x++ {
			for y := uint32(0); y < n; y++ {
				id, err := pmtiles.TileID(z, x, y)
				if err != nil || seen[id] {
					t.Fatalf("%d/%d/%d: id %d, %v (seen %v)", z, x, y, id, err, seen[id])
				}
				seen[id] = true
				pos[id] = [2]uint32{x, y}
				if gz, gx, gy, err := pmtiles.TileZXY(id); err != nil || gz != z || gx != x || gy != y {
					t.Fatalf("TileZXY(%d) = %d/%d/%d, %v; want %d/%d/%d", id, gz, gx, gy, err, z, x, y)
				}
			}
		}
		checkHilbertPath(t, z, pos)
	}
	for id := uint64(0); id < uint64(len(seen)); id++ {
		if !seen[id] {
			t.Fatalf("id %d unused", id)
		}
	}
}

func checkHilbertPath(t *testing.T, z uint32, pos map[uint64][2]uint32) {
	t.Helper()
	base := ((uint64(1) << (2 * z)) - 1) / 3
	for i := uint64(1); i < uint64(len(pos)); i++ {
		a, b := pos[base+i-1], pos[base+i]
		d := absDiff(a[0], b[0]) + absDiff(a[1], b[1])
		if d != 1 {
			t.Fatalf("z%d: ids %d and %d are at %v and %v, not neighbours", z, base+i-1, base+i, a, b)
		}
	}
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// Random points up to zoom 12 round-trip both ways (fixed seed).
func TestTileIDRandomRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		z := rng.Uint32N(13)
		x, y := rng.Uint32N(1<<z), rng.Uint32N(1<<z)
		id, err := pmtiles.TileID(z, x, y)
		if err != nil {
			t.Fatal(err)
		}
		if gz, gx, gy, err := pmtiles.TileZXY(id); err != nil || gz != z || gx != x || gy != y {
			t.Fatalf("%d/%d/%d -> %d -> %d/%d/%d, %v", z, x, y, id, gz, gx, gy, err)
		}
		id = rng.Uint64N(((uint64(1) << 26) - 1) / 3) // any id of zooms 0–12
		z, x, y, err = pmtiles.TileZXY(id)
		if back, err2 := pmtiles.TileID(z, x, y); err != nil || err2 != nil || back != id {
			t.Fatalf("%d -> %d/%d/%d -> %d (%v, %v)", id, z, x, y, back, err, err2)
		}
	}
}

// The edges of the id space: zoom 31 corners, the last valid id, and
// everything out of range.
func TestTileIDLimits(t *testing.T) {
	last := uint32(1<<31 - 1)
	for _, c := range [][2]uint32{{0, 0}, {last, 0}, {0, last}, {last, last}, {12345, 67890}} {
		id, err := pmtiles.TileID(31, c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		if z, x, y, err := pmtiles.TileZXY(id); err != nil || z != 31 || x != c[0] || y != c[1] {
			t.Fatalf("z31 %v -> %d -> %d/%d/%d, %v", c, id, z, x, y, err)
		}
	}
	maxID := uint64(math.MaxUint64)/3 - 1 // (4^32 − 1)/3 − 1
	if z, _, _, err := pmtiles.TileZXY(maxID); err != nil || z != 31 {
		t.Fatalf("last id: z %d, %v", z, err)
	}
	if _, _, _, err := pmtiles.TileZXY(maxID + 1); !errors.Is(err, pmtiles.ErrInvalidTile) {
		t.Fatalf("id past z31: %v", err)
	}
	for _, c := range [][3]uint32{{32, 0, 0}, {3, 8, 0}, {3, 0, 8}, {0, 1, 0}, {31, 1 << 31, 0}} {
		if _, err := pmtiles.TileID(c[0], c[1], c[2]); !errors.Is(err, pmtiles.ErrInvalidTile) {
			t.Errorf("TileID%v: %v", c, err)
		}
	}
}
