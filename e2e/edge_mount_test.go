package e2e

import (
	"database/sql"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", to build broken MBTiles files
)

// MBTiles schema statements of the built files.
const (
	mbCreateMeta  = `CREATE TABLE metadata (name text, value text)`
	mbCreateTiles = `CREATE TABLE tiles (zoom_level integer, tile_column integer, tile_row integer, tile_data blob)`
	mbMeta        = `INSERT INTO metadata VALUES ('minzoom','0'), ('maxzoom','2'), ('format','png')`
)

// buildMBTiles creates an SQLite file at path by running stmts.
func buildMBTiles(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath())
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

// quickCheckFails builds an MBTiles file whose last page (a leaf of the
// tiles b-tree) has an invalid page type: it opens, the schema is there,
// and only PRAGMA quick_check (or reading that page) notices.
func quickCheckFails(t *testing.T, path string) {
	t.Helper()
	buildMBTiles(t, path, `PRAGMA page_size=1024`, mbCreateMeta, mbMeta, mbCreateTiles,
		`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < 99)
		 INSERT INTO tiles SELECT 2, i % 4, i / 4, randomblob(200) FROM n`)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	last := len(b) - 1024
	if b[last] != 0x0d {
		t.Fatalf("last page type %#x, want a table leaf (0x0d)", b[last])
	}
	b[last] = 0
	edgeWriteFile(t, path, b)
}

// brokenPacks writes every broken pack of docs/edge.md §13 into dir and
// returns their names.
func brokenPacks(t *testing.T, dir string) []string {
	t.Helper()
	valid := edgeArchive(t, edgePyramid(1, func(z, x, y uint32) []byte { return []byte{byte(z), byte(x), byte(y)} }),
		pmtilestest.Options{TileType: pmtiles.TileTypePNG, TileCompression: pmtiles.CompressionNone})
	varint11 := make([]byte, 0, 11)
	for range 10 {
		varint11 = append(varint11, 0x80)
	}
	varint11 = append(varint11, 0x01)
	pm := map[string][]byte{
		"bad_magic":  edgeReadFile(t, edgeFixture(t, "pmtiles", "invalid.pmtiles")),
		"version4":   edgeReadFile(t, edgeFixture(t, "pmtiles", "invalid_v4.pmtiles")),
		"zero_bytes": edgeReadFile(t, edgeFixture(t, "pmtiles", "empty.pmtiles")),
		"past_eof":   pmtilestest.PatchHeader(valid, func(h *pmtiles.Header) { h.TileDataLength += 4096 }),
		"tile_comp5": pmtilestest.PatchHeader(valid, func(h *pmtiles.Header) { h.TileCompression = 5 }),
		"varint11":   pmtilestest.Assemble(pmtiles.Header{Version: pmtiles.Version, InternalCompression: pmtiles.CompressionNone, TileCompression: pmtiles.CompressionNone, TileType: pmtiles.TileTypePNG}, varint11, []byte("{}"), nil, []byte("tile")),
	}
	var names []string
	for name, b := range pm {
		edgeWriteFile(t, filepath.Join(dir, name+".pmtiles"), b)
		names = append(names, name)
	}
	edgeCopyFile(t, edgeFixture(t, "mbtiles", "invalid.mbtiles"), filepath.Join(dir, "no_tables.mbtiles"))
	buildMBTiles(t, filepath.Join(dir, "no_tiles.mbtiles"), mbCreateMeta, mbMeta)
	buildMBTiles(t, filepath.Join(dir, "no_metadata.mbtiles"), mbCreateTiles)
	quickCheckFails(t, filepath.Join(dir, "quick_check.mbtiles"))
	names = append(names, "no_tables", "no_tiles", "no_metadata", "quick_check")
	sort.Strings(names)
	return names
}

// TestEdgeBrokenPacksNotMounted: the broken-pack rows of docs/edge.md §13.
// Every broken PMTiles (bad magic, version 4, 0 bytes, a section past EOF,
// tile compression 5, an 11-byte varint) and MBTiles file (no tables, no
// tiles, no metadata, failing quick_check) is not mounted: /readyz lists
// each as missing (pack_errors = "fail") and its URLs answer 404, while a
// valid pack next to them serves.
func TestEdgeBrokenPacksNotMounted(t *testing.T) {
	t.Parallel()
	packs := t.TempDir()
	broken := brokenPacks(t, packs)
	edgeCopyFile(t, edgeFixture(t, "pmtiles", "stamen_toner_z3.pmtiles"), filepath.Join(packs, "good.pmtiles"))
	s := edgeSpec{roles: "edge", packs: packs, dataDir: t.TempDir()}
	n := launch(t, nodeOpts{dataDir: s.dataDir, args: []string{"--roles", s.roles,
		"--config", writeConfig(t, s.dataDir, s.edgeConfig())}})
	e := &edgeNode{node: n, packs: packs}

	var want []string
	for _, name := range broken {
		want = append(want, "edge:pack:"+name)
	}
	var last readyzBody
	var lastStatus int
	ok := pollUntilEvery(readyLimit, edgePollEvery, func() bool {
		if !n.running() {
			return true
		}
		var answered bool
		if lastStatus, last, answered = n.edgeReadyz(); !answered {
			return false
		}
		got := slices.Clone(last.Missing)
		sort.Strings(got)
		return lastStatus == http.StatusServiceUnavailable && slices.Equal(got, want)
	})
	if !n.running() || !ok {
		t.Fatalf("/readyz: %d missing %v; want 503 with missing exactly %v (running %v)", lastStatus, last.Missing, want, n.running())
	}
	for _, name := range broken {
		r := e.get(http.MethodGet, "/tiles/"+name+".json", nil)
		wantError(t, name+" TileJSON", r, http.StatusNotFound, "not_found")
		r = e.get(http.MethodGet, "/tiles/"+name+"/0/0/0.png", nil)
		wantError(t, name+" tile", r, http.StatusNotFound, "not_found")
	}
	if r := e.get(http.MethodGet, "/tiles/good/0/0/0.png", nil); r.status != http.StatusOK {
		t.Errorf("the valid pack next to the broken ones: %d %.200s", r.status, r.body)
	}
}
