package pmtiles_test

import (
	"context"
	"testing"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// BenchmarkTileWarm: lookups with every directory already cached — the
// stamen fixture (root only) and a zoom 0–7 pyramid with one and two levels
// of leaf directories, serially and in parallel.
func BenchmarkTileWarm(b *testing.B) {
	leafOpts := map[string]pmtilestest.Options{
		"leaves1": {LeafSize: 256, LeafLevels: 1},
		"leaves2": {LeafSize: 64, LeafLevels: 2},
	}
	archives := map[string][]byte{"stamen": fixture(b, "stamen_toner_z3.pmtiles")}
	var pyr []pmtilestest.Tile
	for name, opt := range leafOpts {
		if pyr == nil {
			pyr = pyramid(7)
		}
		archives[name] = mustBuild(b, pyr, opt)
	}
	for _, name := range []string{"stamen", "leaves1", "leaves2"} {
		r := mustOpen(b, archives[name], pmtiles.Options{Cache: pmtiles.NewDirCache(pmtiles.DirCacheOptions{})})
		coords := warmCoords(b, r)
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			i := 0
			for b.Loop() {
				c := coords[i%len(coords)]
				if _, ok, err := r.Tile(ctx, c[0], c[1], c[2]); !ok || err != nil {
					b.Fatal(ok, err)
				}
				i++
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for i := 0; pb.Next(); i++ {
					c := coords[i%len(coords)]
					if _, ok, err := r.Tile(ctx, c[0], c[1], c[2]); !ok || err != nil {
						b.Error(ok, err)
						return
					}
				}
			})
		})
	}
}

// warmCoords lists every tile of r (stepping through ids) and looks each up
// once so every leaf is cached.
func warmCoords(b *testing.B, r *pmtiles.Reader) [][3]uint32 {
	b.Helper()
	var coords [][3]uint32
	err := r.Entries(context.Background(), func(e pmtiles.Entry) error {
		for id := e.TileID; id < e.TileID+uint64(e.RunLength); id++ {
			z, x, y, err := pmtiles.TileZXY(id)
			if err != nil {
				return err
			}
			coords = append(coords, [3]uint32{z, x, y})
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range coords {
		if _, ok, err := r.Tile(context.Background(), c[0], c[1], c[2]); !ok || err != nil {
			b.Fatal(c, ok, err)
		}
	}
	return coords
}
