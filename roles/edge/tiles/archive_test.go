package tiles

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// archive500 is a valid PMTiles archive padded to exactly 500 bytes.
func archive500(t testing.TB) []byte {
	t.Helper()
	a, err := pmtilestest.Build([]pmtilestest.Tile{{Z: 0, X: 0, Y: 0, Data: []byte("\x89PNG tile")}},
		pmtilestest.Options{TileType: pmtiles.TileType(2), TileCompression: pmtiles.CompressionNone})
	if err != nil {
		t.Fatal(err)
	}
	if len(a) > 500 {
		t.Fatalf("archive of %d bytes", len(a))
	}
	return append(a, make([]byte, 500-len(a))...)
}

// manyRanges is a bytes= set of n one-byte ranges.
func manyRanges(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strconv.Itoa(i) + "-" + strconv.Itoa(i)
	}
	return "bytes=" + strings.Join(parts, ",")
}

// The bad-input rows of docs/edge.md §13 for tiles and packs.
func TestBadInput(t *testing.T) {
	ev := newEnv(t, Settings{}, func(dir string) {
		writeFile(t, dir, "p.pmtiles", archive500(t))
		copyFixture(t, dir, "pmtiles", "stamen_toner_z3.pmtiles")
		copyFixture(t, dir, "mbtiles", "world_cities.mbtiles")
	})
	tag := packETag(ev.pack(t, "p").ID())
	for _, c := range []struct {
		url    string
		hdr    []string
		status int
		code   string
		cr     string // Content-Range
	}{
		{"/tiles/p/abc/0/0.png", nil, 400, "bad_request", ""},
		{"/tiles/p/32/0/0.png", nil, 400, "bad_request", ""},
		{"/tiles/p/3/8/0.png", nil, 400, "bad_request", ""},
		{"/tiles/p/3/0/8.png", nil, 400, "bad_request", ""},
		{"/tiles/p/12345678901/0/0.png", nil, 400, "bad_request", ""},
		{"/tiles/p/0/00000000000/0.png", nil, 400, "bad_request", ""},
		{"/tiles/nope/abc/0/0.png", nil, 400, "bad_request", ""},
		{"/tiles/p/0/0/0.jpg", nil, 400, "bad_request", ""},
		{"/tiles/stamen_toner_z3/0/0/0.mvt", nil, 400, "bad_request", ""},
		{"/tiles/world_cities/0/0/0.png", nil, 400, "bad_request", ""},
		{"/tiles/p/1/0/0.png", nil, 404, "not_found", ""},
		{"/tiles/stamen_toner_z3/4/0/0.png", nil, 404, "not_found", ""},
		{"/tiles/nope/0/0/0.png", nil, 404, "not_found", ""},
		{"/tiles/nope.json", nil, 404, "not_found", ""},
		{"/tiles/p", nil, 404, "not_found", ""},
		{"/tiles/p/0/0.png", nil, 404, "not_found", ""},
		{"/packs/p.mbtiles", nil, 404, "not_found", ""},
		{"/packs/world_cities.mbtiles", nil, 404, "not_found", ""},
		{"/packs/world_cities.pmtiles", nil, 404, "not_found", ""},
		{"/packs/nope.pmtiles", nil, 404, "not_found", ""},
		{"/packs/p", nil, 404, "not_found", ""},
		{"/packs/p.pmtiles", []string{"Range", "bytes=500-400"}, 416, "range_not_satisfiable", "bytes */500"},
		{"/packs/p.pmtiles", []string{"Range", "bytes=abc"}, 416, "range_not_satisfiable", "bytes */500"},
		{"/packs/p.pmtiles", []string{"Range", "bytes=1000-"}, 416, "range_not_satisfiable", "bytes */500"},
		{"/packs/p.pmtiles", []string{"Range", "items=0-1"}, 200, "", ""},
		{"/packs/p.pmtiles", []string{"Range", manyRanges(129)}, 200, "", ""},
		{"/packs/p.pmtiles", []string{"Range", manyRanges(128)}, 206, "", ""},
		{"/packs/p.pmtiles", []string{"Range", "bytes=0-300,200-499"}, 200, "", ""},
		{"/packs/p.pmtiles", []string{"If-Match", `"pk-old"`}, 412, "precondition_failed", ""},
		{"/packs/p.pmtiles", []string{"If-Match", `"pk-old"`, "Range", "bytes=0-1"}, 412, "precondition_failed", ""},
		{"/packs/p.pmtiles", []string{"If-Range", "W/" + tag, "Range", "bytes=0-1"}, 200, "", ""},
		{"/packs/p.pmtiles", []string{"If-Range", tag, "Range", "bytes=0-1"}, 206, "", "bytes 0-1/500"},
	} {
		w := ev.get(c.url, c.hdr...)
		if w.Code != c.status || w.Header().Get("Content-Range") != c.cr && c.status != 206 {
			t.Errorf("%s %q: %d %q %s", c.url, c.hdr, w.Code, w.Header().Get("Content-Range"), w.Body.String())
			continue
		}
		if c.code != "" {
			if e := envelope(t, w); e.Code != c.code {
				t.Errorf("%s %q: code %q", c.url, c.hdr, e.Code)
			} else if c.status == 416 && e.Details["reason"] != ReasonInvalidRange {
				t.Errorf("%s %q: details %v", c.url, c.hdr, e.Details)
			}
		}
		if c.status == 200 && w.Body.Len() != 500 && strings.HasPrefix(c.url, "/packs/") {
			t.Errorf("%s %q: %d bytes", c.url, c.hdr, w.Body.Len())
		}
	}
	for res, want := range map[string]uint64{"416": 3, "200": 4, "206": 2} {
		if got := ev.counter("edge_range_requests_total", "role", "edge", "result", res); got != want {
			t.Errorf("range_requests_total{%s} = %d, want %d", res, got, want)
		}
	}
	if got := ev.counter("edge_rejects_total", "role", "edge", "reason", ReasonInvalidRange); got != 3 {
		t.Errorf("invalid_range rejects = %d", got)
	}
	if got := ev.counter("edge_tiles_total", "role", "edge", "pack", "", "status", "404"); got != 1 {
		t.Errorf("unknown-pack 404s = %d", got)
	}
}

// The raw archive: headers of docs/edge.md §4.6 and the bytes of the file.
func TestArchive(t *testing.T) {
	ev := newEnv(t, Settings{TilesCacheControl: "public, max-age=5"}, fixtures(t, "stamen_toner_z3.pmtiles"))
	p := ev.pack(t, "stamen_toner_z3")
	file := readAll(t, filepath.Join(ev.dir, "stamen_toner_z3.pmtiles"))
	w := ev.get("/packs/stamen_toner_z3.pmtiles")
	h := w.Header()
	if w.Code != 200 || !bytes.Equal(w.Body.Bytes(), file) || h.Get("Content-Type") != archiveType ||
		h.Get("ETag") != packETag(p.ID()) || h.Get("Cache-Control") != "public, max-age=5" ||
		h.Get("Accept-Ranges") != "bytes" || h.Get("Content-Length") != strconv.Itoa(len(file)) ||
		h.Get("Last-Modified") != p.ModTime().UTC().Format(http.TimeFormat) {
		t.Fatalf("%d %v", w.Code, h)
	}
	// A browser PMTiles client's first request: the first 16 KiB.
	w = ev.get("/packs/stamen_toner_z3.pmtiles", "Range", "bytes=0-16383")
	if w.Code != 206 || !bytes.Equal(w.Body.Bytes(), file[:16384]) ||
		w.Header().Get("Content-Range") != "bytes 0-16383/"+strconv.Itoa(len(file)) {
		t.Errorf("%d %v", w.Code, w.Header())
	}
	// Multipart, parts in request order, across the 64 KiB copy buffer.
	w = ev.get("/packs/stamen_toner_z3.pmtiles", "Range", "bytes=700000-, 0-126, 65530-131080")
	checkMultipart(t, w, file, [][2]int{{700000, len(file)}, {0, 127}, {65530, 131081}})
	if got := ev.counter("edge_bytes_served_total", "role", "edge", "route", RouteArchive); got < uint64(len(file)+16384) {
		t.Errorf("bytes served %d", got)
	}
}

// checkMultipart checks a multipart/byteranges answer against file.
func checkMultipart(t *testing.T, w *httptest.ResponseRecorder, file []byte, want [][2]int) {
	t.Helper()
	mt, params, err := mime.ParseMediaType(w.Header().Get("Content-Type"))
	if w.Code != 206 || err != nil || mt != "multipart/byteranges" {
		t.Fatalf("%d %q %v", w.Code, w.Header().Get("Content-Type"), err)
	}
	if w.Header().Get("Content-Length") != strconv.Itoa(w.Body.Len()) {
		t.Errorf("Content-Length %s, body %d", w.Header().Get("Content-Length"), w.Body.Len())
	}
	mr := multipart.NewReader(w.Body, params["boundary"])
	for i, r := range want {
		part, err := mr.NextPart()
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
		b, _ := io.ReadAll(part)
		cr := "bytes " + strconv.Itoa(r[0]) + "-" + strconv.Itoa(r[1]-1) + "/" + strconv.Itoa(len(file))
		if !bytes.Equal(b, file[r[0]:r[1]]) || part.Header.Get("Content-Range") != cr ||
			part.Header.Get("Content-Type") != archiveType {
			t.Errorf("part %d: %v, %d bytes", i, part.Header, len(b))
		}
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("extra part: %v", err)
	}
}

// matrixCase is one request of the Range/conditional matrix.
type matrixCase struct {
	method, rng string
	cond        [][2]string
}

// The Range/conditional matrix of the raw archive, diffed against
// net/http.ServeContent on the same bytes, ETag and Last-Modified, except
// the cases where docs/edge.md §2 deliberately differs, listed in deliberate with
// their expected answers.
func TestArchiveMatrixAgainstServeContent(t *testing.T) {
	ev := newEnv(t, Settings{}, func(dir string) { writeFile(t, dir, "p.pmtiles", archive500(t)) })
	p := ev.pack(t, "p")
	file := readAll(t, filepath.Join(ev.dir, "p.pmtiles"))
	tag := packETag(p.ID())
	lm := p.ModTime().UTC().Format(http.TimeFormat)
	before := p.ModTime().Add(-time.Hour).UTC().Format(http.TimeFormat)
	after := p.ModTime().Add(time.Hour).UTC().Format(http.TimeFormat)
	deliberate := map[string]int{ // key: method + " " + Range + " " + conditions
		"GET items=0-1 []":                      200, // another unit: ignored (ServeContent 416)
		"GET bytes= []":                         416, // no range at all: malformed (ServeContent 200)
		"HEAD bytes=0-9 []":                     200, // HEAD ignores Range (ServeContent 206)
		"GET " + manyRanges(129) + " []":        200, // over max_ranges (ServeContent 206)
		"GET bytes=0-9 [[If-Range " + lm + "]]": 200, // a pack date is never strong (ServeContent 206)
		// Where ServeContent departs from RFC 9110 §14.1.1 (the ranges
		// package follows the RFC): a zero suffix length is unsatisfiable
		// (ServeContent 206 "bytes 500-499/500"), and range units are
		// case-insensitive (ServeContent 416).
		"GET bytes=-0 []":  416,
		"GET BYTES=0-9 []": 206,
	}
	ranges := []string{"", "bytes=0-0", "bytes=0-", "bytes=-1", "bytes=-5000", "bytes=500-400", "bytes=1000-",
		"bytes=abc", "bytes=0-1,5-9", "bytes=0-499,0-0", "bytes= 1-2 , 4-5", "bytes=99999999999999999999-",
		"bytes=499-", "bytes=0-10,20-30,40-50", "bytes=5-4,0-1"}
	conds := [][][2]string{{}, {{"If-None-Match", tag}}, {{"If-None-Match", "W/" + tag}}, {{"If-None-Match", `"x"`}},
		{{"If-None-Match", "*"}}, {{"If-Match", tag}}, {{"If-Match", `"pk-old"`}}, {{"If-Match", "*"}},
		{{"If-Match", "W/" + tag}}, {{"If-Range", tag}}, {{"If-Range", "W/" + tag}}, {{"If-Range", `"other"`}},
		{{"If-Modified-Since", lm}}, {{"If-Modified-Since", before}}, {{"If-Modified-Since", after}},
		{{"If-Unmodified-Since", before}}, {{"If-Unmodified-Since", lm}},
		{{"If-None-Match", `"x"`}, {"If-Modified-Since", lm}}, {{"If-Match", tag}, {"If-Unmodified-Since", before}},
		{{"If-None-Match", tag}, {"If-Match", `"pk-old"`}}}
	var cases []matrixCase
	for _, rng := range ranges {
		for _, cond := range conds {
			cases = append(cases, matrixCase{http.MethodGet, rng, cond})
		}
	}
	cases = append(cases, matrixCase{http.MethodGet, "items=0-1", nil}, matrixCase{http.MethodGet, "bytes=", nil},
		matrixCase{http.MethodHead, "bytes=0-9", nil}, matrixCase{http.MethodGet, manyRanges(129), nil},
		matrixCase{http.MethodGet, "bytes=0-9", [][2]string{{"If-Range", lm}}},
		matrixCase{http.MethodGet, "bytes=-0", nil}, matrixCase{http.MethodGet, "BYTES=0-9", nil},
		matrixCase{http.MethodHead, "", [][2]string{{"If-None-Match", tag}}},
		matrixCase{http.MethodHead, "", [][2]string{{"If-Match", `"pk-old"`}}})
	for _, c := range cases {
		key := c.method + " " + c.rng + " " + condString(c.cond)
		mine, theirs := ev.serveBoth(c, file, tag, p.ModTime())
		if want, ok := deliberate[key]; ok {
			if mine.Code != want || theirs.Code == want {
				t.Errorf("%s: ours %d (want %d), ServeContent %d", key, mine.Code, want, theirs.Code)
			}
			continue
		}
		sameCR := mine.Code != 206 || mine.Header().Get("Content-Range") == theirs.Header().Get("Content-Range")
		if mine.Code != theirs.Code || !sameCR {
			t.Errorf("%s: ours %d %q, ServeContent %d %q", key, mine.Code, mine.Header().Get("Content-Range"),
				theirs.Code, theirs.Header().Get("Content-Range"))
			continue
		}
		if mine.Code == 416 && mine.Header().Get("Content-Range") != "bytes */500" {
			t.Errorf("%s: 416 Content-Range %q", key, mine.Header().Get("Content-Range"))
		}
		if strings.HasPrefix(mine.Header().Get("Content-Type"), "multipart/") {
			if !strings.HasPrefix(theirs.Header().Get("Content-Type"), "multipart/") {
				t.Errorf("%s: ServeContent %q", key, theirs.Header().Get("Content-Type"))
			}
			continue // boundaries differ; parts are checked by checkMultipart
		}
		if mine.Code < 300 && (!bytes.Equal(mine.Body.Bytes(), theirs.Body.Bytes()) ||
			mine.Header().Get("Content-Length") != theirs.Header().Get("Content-Length")) {
			t.Errorf("%s: bodies differ (%d / %d bytes)", key, mine.Body.Len(), theirs.Body.Len())
		}
	}
}

func condString(cond [][2]string) string {
	parts := make([]string, len(cond))
	for i, kv := range cond {
		parts[i] = "[" + kv[0] + " " + kv[1] + "]"
	}
	return "[" + strings.Join(parts, "") + "]"
}

// serveBoth answers one request with the archive handler and with
// http.ServeContent over the same bytes.
func (ev *env) serveBoth(c matrixCase, file []byte, etag string, mtime time.Time) (mine, theirs *httptest.ResponseRecorder) {
	newReq := func() *http.Request {
		r := httptest.NewRequest(c.method, "/packs/p.pmtiles", nil)
		if c.rng != "" {
			r.Header.Set("Range", c.rng)
		}
		for _, kv := range c.cond {
			r.Header.Add(kv[0], kv[1])
		}
		return r
	}
	mine = ev.do(newReq())
	theirs = httptest.NewRecorder()
	theirs.Header().Set("ETag", etag)
	theirs.Header().Set("Content-Type", archiveType)
	http.ServeContent(theirs, newReq(), "", mtime, bytes.NewReader(file))
	return mine, theirs
}

// A file that turns out shorter than its size while the body is being
// sent aborts the response (http.ErrAbortHandler) after the headers, so
// the client sees a body short of its Content-Length, never a complete
// one.
func TestArchiveShortReadAborts(t *testing.T) {
	ev := newEnv(t, Settings{}, func(dir string) { writeFile(t, dir, "p.pmtiles", archive500(t)) })
	if err := os.Truncate(filepath.Join(ev.dir, "p.pmtiles"), 200); err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	func() {
		defer func() {
			if r := recover(); r != http.ErrAbortHandler {
				t.Errorf("recovered %v", r)
			}
		}()
		ev.e.ServeHTTP(w, req(http.MethodGet, "/packs/p.pmtiles", "Range", "bytes=100-299"))
	}()
	if w.Code != 206 || w.Header().Get("Content-Length") != "200" || w.Body.Len() >= 200 {
		t.Errorf("%d %v, %d bytes", w.Code, w.Header(), w.Body.Len())
	}
}
