package pmtiles_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ronhq/ron/internal/fixtures"
	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture reads testdata/pmtiles/<name>.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures.Dir(t), "pmtiles", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// openBytes opens an in-memory archive.
func openBytes(t testing.TB, b []byte, opt pmtiles.Options) (*pmtiles.Reader, error) {
	t.Helper()
	return pmtiles.Open(context.Background(), bytes.NewReader(b), int64(len(b)), opt)
}

// mustOpen opens an archive that must be valid at the basic level.
func mustOpen(t testing.TB, b []byte, opt pmtiles.Options) *pmtiles.Reader {
	t.Helper()
	r, err := openBytes(t, b, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// mustBuild builds an archive with the test writer.
func mustBuild(t testing.TB, tiles []pmtilestest.Tile, opt pmtilestest.Options) []byte {
	t.Helper()
	b, err := pmtilestest.Build(tiles, opt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pyramid returns every tile of zooms 0..maxZ with data unique per tile
// except where same(z, x, y) says it equals the previous tile's.
func pyramid(maxZ uint32) []pmtilestest.Tile {
	var ts []pmtilestest.Tile
	for z := uint32(0); z <= maxZ; z++ {
		for x := uint32(0); x < 1<<z; x++ {
			for y := uint32(0); y < 1<<z; y++ {
				ts = append(ts, pmtilestest.Tile{Z: z, X: x, Y: y, Data: tileData(z, x, y)})
			}
		}
	}
	return ts
}

// tileData is a tile body that names its coordinates.
func tileData(z, x, y uint32) []byte {
	return []byte{byte(z), byte(x), byte(x >> 8), byte(y), byte(y >> 8), 't'}
}
