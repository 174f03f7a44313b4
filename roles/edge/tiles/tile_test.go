package tiles

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// pmtilesTile reads tile (z, x, y) straight from a fixture file.
func pmtilesTile(t *testing.T, path string, z, x, y uint32) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	r, err := pmtiles.Open(context.Background(), f, fi.Size(), pmtiles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref, ok, err := r.Tile(context.Background(), z, x, y)
	if err != nil || !ok {
		t.Fatalf("tile %d/%d/%d: %v %v", z, x, y, ok, err)
	}
	b, err := r.ReadTile(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A PNG tile: stored bytes, the pack's Content-Type, ETag pk-<id>-<tile id>,
// no Content-Encoding and no Vary; HEAD has the same headers and no body.
func TestTilePNG(t *testing.T) {
	ev := newEnv(t, Settings{}, fixtures(t, "stamen_toner_z3.pmtiles"))
	p := ev.pack(t, "stamen_toner_z3")
	for _, c := range []struct {
		z, x, y uint32
		id      uint64
	}{{0, 0, 0, 0}, {1, 0, 1, 2}, {1, 1, 0, 4}, {3, 1, 1, 23}, {2, 0, 0, 5}} {
		u := "/tiles/stamen_toner_z3/" + strconv.Itoa(int(c.z)) + "/" + strconv.Itoa(int(c.x)) + "/" + strconv.Itoa(int(c.y)) + ".png"
		w := ev.get(u)
		want := pmtilesTile(t, filepath.Join(ev.dir, "stamen_toner_z3.pmtiles"), c.z, c.x, c.y)
		h := w.Header()
		if w.Code != 200 || !bytes.Equal(w.Body.Bytes(), want) {
			t.Fatalf("%s: %d, %d bytes (want %d)", u, w.Code, w.Body.Len(), len(want))
		}
		etag := `"pk-` + p.ID() + "-" + strconv.FormatUint(c.id, 10) + `"`
		if h.Get("Content-Type") != "image/png" || h.Get("ETag") != etag || h.Get("Content-Encoding") != "" ||
			h.Get("Vary") != "" || h.Get("Cache-Control") != DefaultCacheControl || h.Get("Accept-Ranges") != "bytes" ||
			h.Get("Content-Length") != strconv.Itoa(len(want)) || h.Get("Last-Modified") == "" {
			t.Errorf("%s: headers %v (want ETag %s)", u, h, etag)
		}
		hw := ev.do(req(http.MethodHead, u))
		if hw.Code != 200 || hw.Body.Len() != 0 || hw.Header().Get("Content-Length") != h.Get("Content-Length") ||
			hw.Header().Get("ETag") != etag {
			t.Errorf("HEAD %s: %d %v", u, hw.Code, hw.Header())
		}
	}
	if got := ev.counter("edge_tiles_total", "role", "edge", "pack", "stamen_toner_z3", "status", "200"); got != 10 {
		t.Errorf("tiles_total 200 = %d", got)
	}
}

// Accept-Encoding negotiation on a gzip tile (docs/edge.md §6.3): the stored bytes with
// Content-Encoding and the -gz ETag when gzip is acceptable, else the
// decoded bytes with the plain ETag; Vary: Accept-Encoding either way.
func TestTileEncoding(t *testing.T) {
	ev := newEnv(t, Settings{}, fixtures(t, "test_fixture_1.pmtiles", "world_cities.mbtiles"))
	for _, pack := range []struct{ name, url string }{
		{"test_fixture_1", "/tiles/test_fixture_1/0/0/0.mvt"}, {"world_cities", "/tiles/world_cities/0/0/0.pbf"},
	} {
		base := `"pk-` + ev.pack(t, pack.name).ID() + `-0`
		stored := ev.get(pack.url).Body.Bytes()
		decoded := gunzip(t, stored)
		if pack.name == "test_fixture_1" && (len(stored) != 69 || len(decoded) != 49) {
			t.Fatalf("fixture: %d / %d bytes", len(stored), len(decoded))
		}
		for _, c := range []struct {
			ae   []string
			gzip bool
		}{
			{nil, true}, {[]string{"gzip"}, true}, {[]string{"gzip, deflate, br, zstd"}, true}, {[]string{"*"}, true},
			{[]string{"gzip;q=0"}, false}, {[]string{""}, false}, {[]string{"br"}, false}, {[]string{"identity"}, false},
			{[]string{"*, gzip;q=0"}, false}, {[]string{"*;q=0"}, false}, {[]string{"x-gzip;q=0.5"}, true},
		} {
			var hdr []string
			for _, v := range c.ae {
				hdr = append(hdr, "Accept-Encoding", v)
			}
			w := ev.get(pack.url, hdr...)
			h := w.Header()
			wantBody, wantTag, wantCE := decoded, base+`"`, ""
			if c.gzip {
				wantBody, wantTag, wantCE = stored, base+`-gz"`, "gzip"
			}
			if w.Code != 200 || !bytes.Equal(w.Body.Bytes(), wantBody) || h.Get("ETag") != wantTag ||
				h.Get("Content-Encoding") != wantCE || h.Get("Vary") != "Accept-Encoding" ||
				h.Get("Content-Type") != "application/vnd.mapbox-vector-tile" {
				t.Errorf("%s AE %q: %d %v, %d bytes", pack.name, c.ae, w.Code, h, w.Body.Len())
			}
			// Each representation revalidates against its own tag only.
			if w := ev.get(pack.url, append(hdr, "If-None-Match", wantTag)...); w.Code != 304 || w.Body.Len() != 0 ||
				w.Header().Get("ETag") != wantTag || w.Header().Get("Content-Encoding") != "" {
				t.Errorf("%s AE %q: revalidation %d %v", pack.name, c.ae, w.Code, w.Header())
			}
			other := base + `-gz"`
			if c.gzip {
				other = base + `"`
			}
			if w := ev.get(pack.url, append(hdr, "If-None-Match", other)...); w.Code != 200 {
				t.Errorf("%s AE %q: the other representation's tag gave %d", pack.name, c.ae, w.Code)
			}
		}
	}
}

// Decoding on the fly is bounded by tile_max_decoded_bytes: over → 500
// internal with reason decompress_cap (counted); exactly at the cap is fine.
func TestTileDecodeCap(t *testing.T) {
	ev := newEnv(t, Settings{TileMaxDecodedBytes: 48}, fixtures(t, "test_fixture_1.pmtiles"))
	w := ev.get("/tiles/test_fixture_1/0/0/0.mvt", "Accept-Encoding", "identity")
	if e := envelope(t, w); w.Code != 500 || e.Code != "internal" || e.Details["reason"] != ReasonDecompressCap {
		t.Fatalf("%d %+v", w.Code, e)
	}
	if got := ev.counter("edge_rejects_total", "role", "edge", "reason", ReasonDecompressCap); got != 1 {
		t.Errorf("rejects = %d", got)
	}
	if w := ev.get("/tiles/test_fixture_1/0/0/0.mvt"); w.Code != 200 {
		t.Errorf("stored bytes need no decoding: %d", w.Code)
	}
	ev.s.TileMaxDecodedBytes = 49
	if w := ev.get("/tiles/test_fixture_1/0/0/0.mvt", "Accept-Encoding", "identity"); w.Code != 200 || w.Body.Len() != 49 {
		t.Errorf("at the cap: %d %d", w.Code, w.Body.Len())
	}
}

// Absent tiles inside the zoom range: 204 with Cache-Control and the tile
// ETag, no body (test_fixture_mlt has no entries; zoomed_world_cities has
// tiles only at z6 though minzoom is 0).
func TestTileAbsent(t *testing.T) {
	ev := newEnv(t, Settings{}, fixtures(t, "test_fixture_mlt.pmtiles", "zoomed_world_cities.mbtiles"))
	for _, c := range []struct{ name, url, etag, vary string }{
		{"test_fixture_mlt", "/tiles/test_fixture_mlt/0/0/0.mlt", "-0-gz", "Accept-Encoding"},
		{"zoomed_world_cities", "/tiles/zoomed_world_cities/0/0/0.pbf", "-0", ""},
		{"zoomed_world_cities", "/tiles/zoomed_world_cities/5/3/7.mvt", "-" + strconv.FormatUint(mustID(t, 5, 3, 7), 10), ""},
	} {
		etag := `"pk-` + ev.pack(t, c.name).ID() + c.etag + `"`
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			w := ev.do(req(m, c.url))
			h := w.Header()
			if w.Code != 204 || w.Body.Len() != 0 || h.Get("ETag") != etag || h.Get("Cache-Control") != DefaultCacheControl ||
				h.Get("Vary") != c.vary || h.Get("Content-Type") != "" || h.Get("Last-Modified") == "" {
				t.Errorf("%s %s: %d %v", m, c.url, w.Code, h)
			}
		}
		if w := ev.get(c.url, "If-None-Match", etag); w.Code != 304 {
			t.Errorf("%s If-None-Match: %d", c.url, w.Code)
		}
		if w := ev.get(c.url, "If-Match", `"pk-old"`); w.Code != 412 {
			t.Errorf("%s If-Match: %d", c.url, w.Code)
		}
	}
	if got := ev.counter("edge_tiles_total", "role", "edge", "pack", "test_fixture_mlt", "status", "204"); got != 2 {
		t.Errorf("tiles_total 204 = %d", got)
	}
	if got := ev.counter("edge_tiles_total", "role", "edge", "pack", "test_fixture_mlt", "status", "304"); got != 1 {
		t.Errorf("tiles_total 304 = %d", got)
	}
}

func mustID(t *testing.T, z, x, y uint32) uint64 {
	t.Helper()
	id, err := pmtiles.TileID(z, x, y)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// corruptLeaves builds a PMTiles archive whose tile entries sit in leaf
// directories, then overwrites the leaf section with bytes that do not
// decode: it mounts (basic verification) and fails on every tile read.
func corruptLeaves(t testing.TB) []byte {
	t.Helper()
	var ts []pmtilestest.Tile
	for x := uint32(0); x < 4; x++ {
		for y := uint32(0); y < 4; y++ {
			ts = append(ts, pmtilestest.Tile{Z: 2, X: x, Y: y, Data: []byte{0x89, 'P', 'N', 'G', byte(x), byte(y)}})
		}
	}
	a, err := pmtilestest.Build(ts, pmtilestest.Options{InternalCompression: pmtiles.CompressionNone,
		TileCompression: pmtiles.CompressionNone, TileType: pmtiles.TileType(2), LeafSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	h, err := pmtiles.ParseHeader(a)
	if err != nil {
		t.Fatal(err)
	}
	for i := h.LeafOffset; i < h.LeafOffset+h.LeafLength; i++ {
		a[i] = 0xff
	}
	return a
}

// A tile read that finds the archive corrupt is 500 internal; a PMTiles
// conditional request is answered 304 from the tile id alone, without
// reading the (corrupt) directories.
func TestTileCorruptAnd304WithoutRead(t *testing.T) {
	ev := newEnv(t, Settings{}, func(dir string) { writeFile(t, dir, "bad.pmtiles", corruptLeaves(t)) })
	p := ev.pack(t, "bad")
	u := "/tiles/bad/2/1/3.png"
	if w := ev.get(u); w.Code != 500 || envelope(t, w).Code != "internal" {
		t.Fatalf("corrupt read: %d %s", w.Code, w.Body.String())
	}
	etag := `"pk-` + p.ID() + "-" + strconv.FormatUint(mustID(t, 2, 1, 3), 10) + `"`
	w := ev.get(u, "If-None-Match", `"x", `+etag)
	if w.Code != 304 || w.Header().Get("ETag") != etag || w.Header().Get("Cache-Control") == "" {
		t.Fatalf("304 without reading: %d %v %s", w.Code, w.Header(), w.Body.String())
	}
	if w := ev.get(u, "If-Match", `"pk-old"`); w.Code != 412 {
		t.Errorf("412 without reading: %d", w.Code)
	}
}

// Zoom outside the pack's range → 404 with details.reason "zoom"; counted.
func TestTileZoom(t *testing.T) {
	ev := newEnv(t, Settings{}, fixtures(t, "stamen_toner_z3.pmtiles", "world_cities.mbtiles"))
	for _, u := range []string{"/tiles/stamen_toner_z3/4/0/0.png", "/tiles/world_cities/7/0/0.pbf",
		"/tiles/stamen_toner_z3/31/0/0.png"} {
		w := ev.get(u)
		e := envelope(t, w)
		if w.Code != 404 || e.Code != "not_found" || e.Details["reason"] != ReasonZoom {
			t.Errorf("%s: %d %+v", u, w.Code, e)
		}
	}
	if got := ev.counter("edge_tiles_total", "role", "edge", "pack", "stamen_toner_z3", "status", "404"); got != 2 {
		t.Errorf("tiles_total 404 = %d", got)
	}
}

// Ranges apply to tiles too (docs/edge.md §2), on the representation sent.
func TestTileRange(t *testing.T) {
	ev := newEnv(t, Settings{}, fixtures(t, "test_fixture_1.pmtiles"))
	u := "/tiles/test_fixture_1/0/0/0.mvt"
	full := ev.get(u, "Accept-Encoding", "identity").Body.Bytes()
	w := ev.get(u, "Accept-Encoding", "identity", "Range", "bytes=10-19")
	if w.Code != 206 || !bytes.Equal(w.Body.Bytes(), full[10:20]) || w.Header().Get("Content-Range") != "bytes 10-19/49" {
		t.Errorf("%d %v", w.Code, w.Header())
	}
	w = ev.get(u, "Range", "bytes=69-")
	if w.Code != 416 || w.Header().Get("Content-Range") != "bytes */69" || w.Header().Get("Content-Encoding") != "" ||
		envelope(t, w).Details["reason"] != ReasonInvalidRange {
		t.Errorf("%d %v", w.Code, w.Header())
	}
	w = ev.get(u, "If-Match", `"pk-old"`)
	if w.Code != 412 || w.Header().Get("Content-Encoding") != "" || envelope(t, w).Code != "precondition_failed" {
		t.Errorf("%d %v", w.Code, w.Header())
	}
}

// Last-Modified is the file's mtime, or the Date when the mtime is later.
func TestLastModifiedClamp(t *testing.T) {
	ev := newEnv(t, Settings{}, fixtures(t, "stamen_toner_z3.pmtiles"))
	p := ev.pack(t, "stamen_toner_z3")
	ev.now = p.ModTime().Add(time.Hour)
	w := ev.get("/tiles/stamen_toner_z3/0/0/0.png")
	if got := w.Header().Get("Last-Modified"); got != p.ModTime().UTC().Format(http.TimeFormat) {
		t.Errorf("Last-Modified %q", got)
	}
	if w.Header().Get("Date") != ev.now.UTC().Format(http.TimeFormat) {
		t.Errorf("Date %q", w.Header().Get("Date"))
	}
	ev.now = p.ModTime().Add(-time.Hour)
	w = ev.get("/tiles/stamen_toner_z3/0/0/0.png")
	if lm := w.Header().Get("Last-Modified"); lm != w.Header().Get("Date") || lm != ev.now.UTC().Format(http.TimeFormat) {
		t.Errorf("future mtime: Last-Modified %q, Date %q", lm, w.Header().Get("Date"))
	}
	// If-Modified-Since applies (no If-None-Match): the tile is unmodified
	// since its Last-Modified.
	if w := ev.get("/tiles/stamen_toner_z3/0/0/0.png", "If-Modified-Since", w.Header().Get("Last-Modified")); w.Code != 304 {
		t.Errorf("If-Modified-Since: %d", w.Code)
	}
}
