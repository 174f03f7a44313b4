package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/fixtures"
	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// Limits of the edge tests (docs/edge.md). They bound polls; a healthy run
// meets each in well under a second.
const (
	// edgePollInterval is the pack_poll_interval the tests configure, so that
	// a replaced pack is re-mounted within about three intervals (docs/edge.md §4.3: a
	// change is acted on once two consecutive polls saw the same stat).
	edgePollInterval = 200 * time.Millisecond
	// edgeRemountLimit bounds a replaced pack being served with its new ETag.
	edgeRemountLimit = 20 * time.Second
	// edgePollEvery paces polls that cost a request.
	edgePollEvery = 50 * time.Millisecond
)

// edgeNode is a running `ron serve` with the edge role (node.edge is its
// edge listener) and its packs folder.
type edgeNode struct {
	*node
	packs string // its packs_dir
}

// edgeSpec configures startEdge.
type edgeSpec struct {
	roles   string   // --roles
	packs   string   // packs_dir ("" = a new empty folder)
	table   string   // more key = value lines inside [edge]
	origins []string // complete [[edge.origins]] tables
	more    string   // more TOML after the edge tables (e.g. [gateway])
	args    []string // more serve flags
	dataDir string   // "" = a new temp dir
	listen  string   // the edge listener ("" = a fresh loopback port)
}

// edgeConfig renders the config file of s.
func (s edgeSpec) edgeConfig() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[edge]\npacks_dir = %q\npack_poll_interval = %q\n%s\n", s.packs, edgePollInterval.String(), s.table)
	for _, o := range s.origins {
		b.WriteString("\n[[edge.origins]]\n" + o + "\n")
	}
	b.WriteString("\n" + s.more)
	return b.String()
}

// edgeOrigin is one [[edge.origins]] table for a loopback origin.
func edgeOrigin(name, url string, extra ...string) string {
	return fmt.Sprintf("name = %q\nurl = %q\nallow_insecure = true\n%s", name, url, strings.Join(extra, "\n"))
}

// startEdge starts `ron serve` with the edge listener on s.listen (or a
// fresh loopback port) and waits until it is ready.
func startEdge(t *testing.T, s edgeSpec) *edgeNode {
	t.Helper()
	if s.dataDir == "" {
		s.dataDir = t.TempDir()
	}
	if s.packs == "" {
		s.packs = t.TempDir()
	}
	o := nodeOpts{dataDir: s.dataDir, args: append([]string{"--roles", s.roles,
		"--config", writeConfig(t, s.dataDir, s.edgeConfig())}, s.args...)}
	if s.listen != "" {
		o.ports = freePorts(t)
		o.ports.edge = s.listen
	}
	return &edgeNode{node: startNode(t, o), packs: s.packs}
}

// restartEdge starts e again on its data dir, ports and flags (e must have
// exited) and waits until it is ready.
func (e *edgeNode) restartEdge() *edgeNode {
	e.t.Helper()
	return &edgeNode{node: e.restart(), packs: e.packs}
}

// edgeURL is the URL of path on the edge listener.
func (e *edgeNode) edgeURL(path string) string { return "http://" + e.edge + path }

// get sends method path to the edge with the headers h.
func (e *edgeNode) get(method, path string, h http.Header) httpResult {
	e.t.Helper()
	return do(e.t, method, e.edgeURL(path), h, nil)
}

// edgeFixture is testdata/<kind>/<name>.
func edgeFixture(t testing.TB, kind, name string) string {
	t.Helper()
	return filepath.Join(fixtures.Dir(t), kind, name)
}

// edgeReadFile is the content of path.
func edgeReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edgeCopyFile copies src to dst (mode 0644).
func edgeCopyFile(t testing.TB, src, dst string) {
	t.Helper()
	edgeWriteFile(t, dst, edgeReadFile(t, src))
}

// edgeWriteFile writes b to path (mode 0644).
func edgeWriteFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// edgeReplace writes b under a temporary name in path's folder and
// renames it over path, as operators are told to (docs/edge.md §4.3).
func edgeReplace(t testing.TB, path string, b []byte) {
	t.Helper()
	tmp := path + ".tmp"
	edgeWriteFile(t, tmp, b)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// Valid fixtures: each mounts under basic verification (docs/edge.md §14).
var (
	validPMTiles = []string{"stamen_toner_z3", "test_fixture_1", "test_fixture_2", "test_fixture_mlt"}
	validMBTiles = []string{"world_cities", "zoomed_world_cities", "geography-class-png", "uncompressed_mvt",
		"webp", "json", "bad_hash"}
)

// edgeCopyValidFixtures copies every valid fixture into dir under its own name.
func edgeCopyValidFixtures(t testing.TB, dir string) {
	t.Helper()
	for _, n := range validPMTiles {
		edgeCopyFile(t, edgeFixture(t, "pmtiles", n+".pmtiles"), filepath.Join(dir, n+".pmtiles"))
	}
	for _, n := range validMBTiles {
		edgeCopyFile(t, edgeFixture(t, "mbtiles", n+".mbtiles"), filepath.Join(dir, n+".mbtiles"))
	}
}

// edgePyramid returns every tile of zooms 0…maxZ with data(z, x, y).
func edgePyramid(maxZ uint32, data func(z, x, y uint32) []byte) []pmtilestest.Tile {
	var ts []pmtilestest.Tile
	for z := uint32(0); z <= maxZ; z++ {
		for x := uint32(0); x < 1<<z; x++ {
			for y := uint32(0); y < 1<<z; y++ {
				ts = append(ts, pmtilestest.Tile{Z: z, X: x, Y: y, Data: data(z, x, y)})
			}
		}
	}
	return ts
}

// edgeArchive builds a PMTiles archive with the test writer.
func edgeArchive(t testing.TB, tiles []pmtilestest.Tile, opt pmtilestest.Options) []byte {
	t.Helper()
	b, err := pmtilestest.Build(tiles, opt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edgePNGPackOfSize builds a PNG archive of exactly size bytes: every tile of
// zooms 0–3 holds the same blob (one run-length entry), padded until the
// file has the wanted size.
func edgePNGPackOfSize(t testing.TB, size int) []byte {
	t.Helper()
	n := 16
	for range 8 {
		blob := bytes.Repeat([]byte{'.'}, n)
		copy(blob, "\x89PNG\r\n\x1a\n")
		b := edgeArchive(t, edgePyramid(3, func(_, _, _ uint32) []byte { return blob }),
			pmtilestest.Options{TileType: pmtiles.TileTypePNG, TileCompression: pmtiles.CompressionNone})
		if len(b) == size {
			return b
		}
		n += size - len(b)
		if n < 8 {
			t.Fatalf("cannot build a %d-byte archive: %d bytes without tile data", size, len(b)-n)
		}
	}
	t.Fatalf("no archive of exactly %d bytes", size)
	return nil
}

// edgeGoTiles reads the stored bytes of the tiles zxys of archive b with the Go
// reader (nil for an absent tile).
func edgeGoTiles(t testing.TB, b []byte, zxys [][3]uint32) [][]byte {
	t.Helper()
	ctx := context.Background()
	r, err := pmtiles.Open(ctx, bytes.NewReader(b), int64(len(b)), pmtiles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(zxys))
	for i, c := range zxys {
		ref, ok, err := r.Tile(ctx, c[0], c[1], c[2])
		if err != nil {
			t.Fatalf("tile %v: %v", c, err)
		}
		if !ok {
			continue
		}
		if out[i], err = r.ReadTile(ctx, ref); err != nil {
			t.Fatalf("tile %v: %v", c, err)
		}
	}
	return out
}

// waitPackETag polls HEAD /packs/<name>.pmtiles until its ETag is not old
// (the pack was re-mounted) and returns the new one.
func (e *edgeNode) waitPackETag(name, old string) string {
	e.t.Helper()
	var cur string
	ok := pollUntilEvery(edgeRemountLimit, edgePollEvery, func() bool {
		r := e.get(http.MethodHead, "/packs/"+name+".pmtiles", nil)
		cur = r.header.Get("ETag")
		return r.status == http.StatusOK && cur != "" && cur != old
	})
	if !ok {
		e.t.Fatalf("/packs/%s.pmtiles still has ETag %s after %s (want a new one after the replacement)", name, cur, edgeRemountLimit)
	}
	return cur
}

// edgeReadyz fetches n's /readyz; ok is false when it did not answer.
func (n *node) edgeReadyz() (status int, body readyzBody, ok bool) {
	resp, err := httpClient.Get("http://" + n.admin + "/readyz")
	if err != nil {
		return 0, body, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || json.Unmarshal(b, &body) != nil {
		return resp.StatusCode, body, false
	}
	return resp.StatusCode, body, true
}
