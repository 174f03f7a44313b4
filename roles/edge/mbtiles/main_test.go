package mbtiles

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	testdata "github.com/ronhq/ron/internal/fixtures"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture returns the path of testdata/mbtiles/<name>.
func fixture(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(testdata.Dir(t), "mbtiles", name)
}

// openT opens path with opt and registers Close.
func openT(t testing.TB, path string, opt Options) *Pack {
	t.Helper()
	p, err := Open(context.Background(), path, opt)
	if err != nil {
		t.Fatalf("Open(%s): %v", filepath.Base(path), err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

// row is one tiles row as stored (TMS row).
type row struct {
	z, x, tmsY int64
	data       []byte
}

// readRows reads every row of tiles straight from the file, independently
// of Pack, as the reference the tests compare against.
func readRows(t testing.TB, path string) []row {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+uriPath(path)+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles
		ORDER BY zoom_level, tile_column, tile_row`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.z, &r.x, &r.tmsY, &r.data); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// xyzY converts a stored TMS row back to XYZ y.
func (r row) xyzY() uint32 { return uint32(int64(1)<<r.z - 1 - r.tmsY) }

// buildDB creates a writable SQLite file at path and runs stmts in order.
func buildDB(t testing.TB, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+uriPath(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}
