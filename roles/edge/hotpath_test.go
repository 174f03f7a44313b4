package edge

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/ronhq/ron/store"
)

// TestHitHeadersStable: warm hits share precomputed header values; the
// CORS Vary a listed origin adds, and repeated hits (tile cache, idle blob
// handles), never change what the next answer carries.
func TestHitHeadersStable(t *testing.T) {
	dir := packsDir(t, "pmtiles/test_fixture_1.pmtiles", "pmtiles/stamen_toner_z3.pmtiles")
	object := bytes.Repeat([]byte("object "), 10_000)
	h := startRole(t, func(c *Config, _ *Options) {
		c.PacksDir = dir
		c.CORSOrigins = []string{"https://app.example"}
	})
	id := store.Sum(object)
	fill, err := h.r.cache.NewFill(int64(len(object)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fill.Write(object); err != nil {
		t.Fatal(err)
	}
	if err := fill.CommitObject(id, ""); err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		name, path string
		hdr        []string
		want       map[string]string // header → value (joined with ", ")
		body       func(string) bool
	}{
		{"gzip tile, listed origin", "/tiles/test_fixture_1/0/0/0.mvt", []string{"Origin", "https://app.example"},
			map[string]string{"Vary": "Accept-Encoding, Origin", "Content-Encoding": "gzip",
				"Access-Control-Allow-Origin": "https://app.example", "Content-Type": "application/vnd.mapbox-vector-tile"},
			func(b string) bool { return strings.HasPrefix(b, "\x1f\x8b") }},
		{"gzip tile refused", "/tiles/test_fixture_1/0/0/0.mvt", []string{"Accept-Encoding", "identity"},
			map[string]string{"Vary": "Accept-Encoding, Origin", "Content-Encoding": "", "Access-Control-Allow-Origin": ""},
			func(b string) bool { return len(b) == 49 }},
		{"png tile", "/tiles/stamen_toner_z3/0/0/0.png", nil,
			map[string]string{"Vary": "Origin", "Accept-Ranges": "bytes", "Cache-Control": "public, max-age=60",
				"X-Content-Type-Options": "nosniff"},
			func(b string) bool { return strings.HasPrefix(b, "\x89PNG") }},
		{"object", "/o/" + id.String(), []string{"Origin", "https://app.example"},
			map[string]string{"Vary": "Origin", "Cache-Status": "ron-edge; hit", "Accept-Ranges": "bytes",
				"Cache-Control": "public, max-age=31536000, immutable", "ETag": `"` + id.String() + `"`},
			func(b string) bool { return b == string(object) }},
	}
	for round := range 3 {
		for _, row := range rows {
			resp, body := h.get(t, "GET", row.path, row.hdr...)
			if resp.StatusCode != http.StatusOK || !row.body(body) {
				t.Fatalf("round %d %s: %d, %d bytes", round, row.name, resp.StatusCode, len(body))
			}
			for name, want := range row.want {
				if got := strings.Join(resp.Header.Values(name), ", "); got != want {
					t.Fatalf("round %d %s: %s = %q, want %q", round, row.name, name, got, want)
				}
			}
			if resp.Header.Get("X-Corr-ID") == "" || resp.Header.Get("Content-Length") == "" {
				t.Fatalf("round %d %s: no X-Corr-ID or Content-Length", round, row.name)
			}
		}
	}
}
