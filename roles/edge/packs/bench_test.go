package packs

import (
	"context"
	"testing"
)

// BenchmarkMountFixtures measures Mount (Start to mounted) of every valid
// fixture, PMTiles and MBTiles, at the basic level (docs/edge.md §4.2,
// §14: < 300 ms).
func BenchmarkMountFixtures(b *testing.B) {
	dir := b.TempDir()
	for _, f := range []string{"stamen_toner_z3", "test_fixture_1", "test_fixture_2", "test_fixture_mlt"} {
		copyFixture(b, "pmtiles", f+".pmtiles", dir, f+".pmtiles")
	}
	for _, f := range []string{"world_cities", "zoomed_world_cities", "geography-class-png", "uncompressed_mvt", "webp", "json", "bad_hash"} {
		copyFixture(b, "mbtiles", f+".mbtiles", dir, f+".mbtiles")
	}
	for b.Loop() {
		s := NewSet(Options{Dir: dir})
		if err := s.Mount(context.Background()); err != nil || len(s.List()) != 11 {
			b.Fatalf("%v: %d mounted %+v", err, len(s.List()), s.Status())
		}
		s.Close()
	}
}
