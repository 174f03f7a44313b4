package mbtiles

import (
	"context"
	"testing"
)

// benchTiles opens world_cities and lists its tiles' XYZ addresses.
func benchTiles(b *testing.B) (*Pack, []row) {
	p := openT(b, fixture(b, "world_cities.mbtiles"), Options{})
	rows := readRows(b, p.Path())
	ctx := context.Background()
	for _, r := range rows { // warm the page cache and every connection path
		if _, found, err := p.Tile(ctx, uint32(r.z), uint32(r.x), r.xyzY()); err != nil || !found {
			b.Fatal(err, found)
		}
	}
	return p, rows
}

// BenchmarkTileWarm reads the 196 tiles of world_cities in turn from one
// goroutine.
func BenchmarkTileWarm(b *testing.B) {
	p, rows := benchTiles(b)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r := rows[i%len(rows)]
		i++
		if _, _, err := p.Tile(ctx, uint32(r.z), uint32(r.x), r.xyzY()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTileWarmParallel reads tiles from GOMAXPROCS goroutines, the
// pool at its default 2 × GOMAXPROCS connections.
func BenchmarkTileWarmParallel(b *testing.B) {
	p, rows := benchTiles(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r := rows[i%len(rows)]
			i++
			if _, _, err := p.Tile(ctx, uint32(r.z), uint32(r.x), r.xyzY()); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
