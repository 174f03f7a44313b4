package e2e

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// edgeSmall is the size of the object and of the pack the Range rows of the
// bad-input table use (docs/edge.md §13: "bytes */500").
const edgeSmall = 500

// edgeOriginServer is the loopback origin of the /assets rows: it counts the
// requests it gets per method and path.
type edgeOriginServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen map[string]int // "METHOD /path" → requests
}

// newEdgeOrigin starts the origin; it is closed at test end.
func newEdgeOrigin(t *testing.T) *edgeOriginServer {
	t.Helper()
	o := &edgeOriginServer{seen: map[string]int{}}
	o.Server = httptest.NewServer(http.HandlerFunc(o.serve))
	t.Cleanup(o.Close)
	return o
}

func (o *edgeOriginServer) serve(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	o.seen[r.Method+" "+r.URL.Path]++
	o.mu.Unlock()
	_, _ = io.Copy(io.Discard, r.Body)
	h := w.Header()
	switch r.URL.Path {
	case "/unquoted": // an ETag that is not an entity-tag
		h.Set("ETag", "abc")
		h.Set("Cache-Control", "max-age=600")
		_, _ = io.WriteString(w, "unquoted etag body")
	case "/redirect": // a redirect to a host the edge must never contact
		h.Set("Location", "http://other.example/elsewhere")
		h.Set("Cache-Control", "max-age=600")
		w.WriteHeader(http.StatusFound)
	default:
		h.Set("Cache-Control", "max-age=600")
		_, _ = io.WriteString(w, "origin body of "+r.URL.Path)
	}
}

// count is how many requests the origin got for "METHOD /path".
func (o *edgeOriginServer) count(key string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seen[key]
}

// edgeTable is the node of the bad-input table: every role the edge uses,
// the valid fixtures, a 500-byte pack p, a pack whose leaf directory points
// past the leaf section, a 500-byte object, and two origins (o refuses
// unsafe methods, fw forwards them).
type edgeTable struct {
	*edgeNode
	origin   *edgeOriginServer
	objID    string // the 500-byte object
	obj      []byte
	packETag string // ETag of /packs/p.pmtiles
}

// startEdgeTable starts the bad-input node and warms the object into the
// edge's cache.
func startEdgeTable(t *testing.T) *edgeTable {
	t.Helper()
	origin := newEdgeOrigin(t)
	packs := t.TempDir()
	edgeCopyValidFixtures(t, packs)
	edgeWriteFile(t, filepath.Join(packs, "p.pmtiles"), edgePNGPackOfSize(t, edgeSmall))
	edgeWriteFile(t, filepath.Join(packs, "leafbad.pmtiles"), leafPastSection())
	e := startEdge(t, edgeSpec{roles: "edge,storage,index", packs: packs, origins: []string{
		edgeOrigin("o", origin.URL),
		edgeOrigin("fw", origin.URL, "forward_unsafe = true"),
	}})
	tb := &edgeTable{edgeNode: e, origin: origin, obj: randomBytes(13, edgeSmall)}
	tb.objID = e.post(e.token("storage:write"), tb.obj).CID
	if r := e.get(http.MethodGet, "/o/"+tb.objID, nil); r.status != http.StatusOK || !bytes.Equal(r.body, tb.obj) {
		t.Fatalf("GET /o/%s through the edge: %d (%d bytes, %v), want 200 with the object", tb.objID, r.status, len(r.body), r.err)
	}
	r := e.get(http.MethodHead, "/packs/p.pmtiles", nil)
	if tb.packETag = r.header.Get("ETag"); r.status != http.StatusOK || !strings.HasPrefix(tb.packETag, `"pk-`) {
		t.Fatalf("HEAD /packs/p.pmtiles: %d, ETag %q", r.status, tb.packETag)
	}
	return tb
}

// leafPastSection is a PNG archive whose root points to one leaf directory
// that itself points to a leaf directory past the end of the leaf section:
// it mounts under basic verification, and only serving tile 0/0/0 finds the
// corruption (docs/edge.md §13).
func leafPastSection() []byte {
	leaf := pmtilestest.EncodeDirectory([]pmtiles.Entry{{TileID: 0, Offset: 4096, Length: 16, RunLength: 0}})
	root := pmtilestest.EncodeDirectory([]pmtiles.Entry{{TileID: 0, Offset: 0, Length: uint32(len(leaf)), RunLength: 0}})
	h := pmtiles.Header{Version: pmtiles.Version, InternalCompression: pmtiles.CompressionNone,
		TileCompression: pmtiles.CompressionNone, TileType: pmtiles.TileTypePNG,
		MinLonE7: -1800000000, MinLatE7: -850000000, MaxLonE7: 1800000000, MaxLatE7: 850000000}
	return pmtilestest.Assemble(h, root, []byte("{}"), leaf, []byte("\x89PNG\r\n\x1a\nnot reached"))
}

// edgeRow is one row of the bad-input table: a request and what must come
// back.
type edgeRow struct {
	name   string
	method string // "" = GET
	path   string
	header http.Header
	body   []byte
	status int
	code   string            // error envelope code ("" = the answer is not an envelope)
	reason string            // details.reason of the envelope ("" = not checked)
	want   map[string]string // headers with their exact values
	size   int               // 200: the body length (0 = not checked)
}

// manyRanges is a bytes= set of n one-byte ranges that do not overlap.
func manyRanges(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("%d-%d", 2*i, 2*i)
	}
	return "bytes=" + strings.Join(parts, ",")
}

// gzipBomb is a gzip body of 9 MiB of zeros: far above the decode guard's
// 10× ratio and 8 MiB (docs/edge.md §2).
func gzipBomb(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if _, err := zw.Write(make([]byte, 9<<20)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rangeRows are the Range and conditional rows of docs/edge.md §13 for one
// 500-byte resource with the strong ETag etag.
func rangeRows(what, path, etag string) []edgeRow {
	unsatisfiable := map[string]string{"Content-Range": "bytes */500"}
	full := func(name string, kv ...string) edgeRow {
		return edgeRow{name: what + ": " + name, path: path, header: hdr(kv...), status: 200, size: edgeSmall,
			want: map[string]string{"ETag": etag, "Accept-Ranges": "bytes"}}
	}
	return []edgeRow{
		{name: what + ": Range bytes=500-400", path: path, header: hdr("Range", "bytes=500-400"), status: 416,
			code: "range_not_satisfiable", reason: "invalid_range", want: unsatisfiable},
		{name: what + ": Range bytes=abc", path: path, header: hdr("Range", "bytes=abc"), status: 416,
			code: "range_not_satisfiable", reason: "invalid_range", want: unsatisfiable},
		{name: what + ": Range bytes=1000-", path: path, header: hdr("Range", "bytes=1000-"), status: 416,
			code: "range_not_satisfiable", reason: "invalid_range", want: unsatisfiable},
		full("Range items=0-1", "Range", "items=0-1"),
		full("129 ranges", "Range", manyRanges(129)),
		full("overlapping ranges longer than the file", "Range", "bytes=0-399,100-499"),
		full("If-Range with a weak tag", "Range", "bytes=0-9", "If-Range", "W/"+etag),
		{name: what + ": 128 ranges (the cap) are served", path: path, header: hdr("Range", manyRanges(128)), status: 206},
		{name: what + ": If-Range with the strong tag", path: path, header: hdr("Range", "bytes=0-9", "If-Range", etag),
			status: 206, want: map[string]string{"Content-Range": "bytes 0-9/500"}},
	}
}

// edgeRows is the bad-input table of docs/edge.md §13, as HTTP requests
// against tb.
func edgeRows(t *testing.T, tb *edgeTable) []edgeRow {
	bad := func(name, path string) edgeRow {
		return edgeRow{name: name, path: path, status: 400, code: "bad_request"}
	}
	notFound := func(name, path string) edgeRow {
		return edgeRow{name: name, path: path, status: 404, code: "not_found"}
	}
	hex := strings.TrimPrefix(tb.objID, "b3:")
	rows := []edgeRow{
		bad("/o invalid id: not b3", "/o/abc"),
		bad("/o invalid id: upper-case hex", "/o/b3:"+strings.ToUpper(hex)),
		bad("/o invalid id: 63 hex digits", "/o/b3:"+hex[1:]),
		bad("/o invalid id: other hash", "/o/sha256:"+hex),
		bad("tile: z not a number", "/tiles/p/abc/0/0.png"),
		bad("tile: z = 32", "/tiles/p/32/0/0.png"),
		bad("tile: x ≥ 2^z", "/tiles/p/3/8/0.png"),
		bad("tile: y ≥ 2^z", "/tiles/p/3/0/8.png"),
		bad("tile: 11-digit z", "/tiles/p/00000000003/0/0.png"),
		bad("tile: 11-digit x", "/tiles/p/3/00000000001/0.png"),
		bad("tile: jpg for a PNG pack", "/tiles/p/0/0/0.jpg"),
		{name: "tile: z beyond max zoom", path: "/tiles/p/4/0/0.png", status: 404, code: "not_found", reason: "zoom"},
		notFound("tile: unknown pack", "/tiles/nopack/0/0/0.png"),
		notFound("TileJSON: unknown pack", "/tiles/nopack.json"),
		notFound("raw: /packs/p.mbtiles", "/packs/p.mbtiles"),
		notFound("raw: an MBTiles pack is not served raw", "/packs/world_cities.mbtiles"),
		notFound("raw: an MBTiles pack has no .pmtiles archive", "/packs/world_cities.pmtiles"),
		{name: "raw: If-Match with a stale tag", path: "/packs/p.pmtiles", header: hdr("If-Match", `"pk-old"`),
			status: 412, code: "precondition_failed"},
		{name: "/o: If-Match with another tag", path: "/o/" + tb.objID, header: hdr("If-Match", `"b3:`+strings.Repeat("0", 64)+`"`),
			status: 412, code: "precondition_failed"},
		{name: "assets: unknown origin", path: "/assets/unknown/x", status: 404, code: "not_found", reason: "not_allowed"},
		bad("assets: dot-dot segment", "/assets/o/a/../b"),
		bad("assets: %2e%2e segment", "/assets/o/a/%2e%2e/b"),
		bad("assets: %2E%2E segment", "/assets/o/a/%2E%2E/b"),
		bad("assets: dot segment", "/assets/o/./b"),
		{name: "TRACE", method: "TRACE", path: "/assets/o/x", status: 405, code: "method_not_allowed", reason: "not_allowed"},
		{name: "POST without forward_unsafe", method: http.MethodPost, path: "/assets/o/x", body: []byte("x"),
			status: 405, code: "method_not_allowed", want: map[string]string{"Allow": "GET, HEAD"}},
		{name: "body over body_max_bytes", method: http.MethodPost, path: "/assets/fw/x", body: make([]byte, 1<<20+1),
			status: 413, code: "payload_too_large", reason: "body_cap"},
		{name: "gzip bomb body on a forwarded POST", method: http.MethodPost, path: "/assets/fw/x", body: gzipBomb(t),
			header: hdr("Content-Encoding", "gzip"), status: 413, code: "decoded_cap", reason: "decompress_cap"},
		{name: "Request-Timeout: abc on a tile", path: "/tiles/p/0/0/0.png", header: hdr("Request-Timeout", "abc"),
			status: 400, code: "bad_request"},
		{name: "Request-Timeout: abc on /o", path: "/o/" + tb.objID, header: hdr("Request-Timeout", "abc"),
			status: 400, code: "bad_request"},
		{name: "leaf directory past the leaf section", path: "/tiles/leafbad/0/0/0.png", status: 500, code: "internal"},
	}
	rows = append(rows, rangeRows("raw pack", "/packs/p.pmtiles", tb.packETag)...)
	return append(rows, rangeRows("/o", "/o/"+tb.objID, `"`+tb.objID+`"`)...)
}

// check sends the row's request to e and checks the answer.
func (row edgeRow) check(t *testing.T, e *edgeNode) {
	t.Helper()
	method := row.method
	if method == "" {
		method = http.MethodGet
	}
	r := do(t, method, e.edgeURL(row.path), row.header, row.body)
	if r.err != nil {
		t.Fatalf("%s %s: body: %v", method, row.path, r.err)
	}
	if r.status != row.status {
		t.Fatalf("%s %s: status %d, want %d (body %.300s)", method, row.path, r.status, row.status, r.body)
	}
	for k, v := range row.want {
		if got := r.header.Get(k); got != v {
			t.Errorf("%s: %s = %q, want %q", row.name, k, got, v)
		}
	}
	if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options %q, want nosniff", row.name, got)
	}
	if r.header.Get("X-Corr-ID") == "" {
		t.Errorf("%s: no X-Corr-ID", row.name)
	}
	if row.size > 0 && len(r.body) != row.size {
		t.Errorf("%s: %d body bytes, want %d", row.name, len(r.body), row.size)
	}
	if row.code == "" {
		return
	}
	env := wantError(t, row.name, r, row.status, row.code)
	if row.reason != "" {
		if got, _ := env.Error.Details["reason"].(string); got != row.reason {
			t.Errorf("%s: details.reason %q, want %q (body %s)", row.name, got, row.reason, r.body)
		}
	}
}

// TestEdgeBadInput runs every row of docs/edge.md §13 that one HTTP request
// can express against a real `ron serve --roles=edge,storage,index` holding
// the fixtures, a 500-byte pack, a 500-byte object and two loopback origins.
// The rows about broken packs, storage returning wrong bytes and the origin's
// answers have tests of their own below and in edge_objects_test.go.
func TestEdgeBadInput(t *testing.T) {
	t.Parallel()
	tb := startEdgeTable(t)
	for _, row := range edgeRows(t, tb) {
		t.Run(row.name, func(t *testing.T) { row.check(t, tb.edgeNode) })
	}
	if n := tb.origin.count("POST /x"); n != 0 {
		t.Errorf("the origin got %d POST /x: refused bodies must never be forwarded", n)
	}
	t.Run("leaf corruption is re-verified at the next poll", func(t *testing.T) {
		// The 500 row above reported the corruption; the next poll verifies
		// the pack at the full level, which fails.
		poll(t, edgeRemountLimit, `ron_edge_pack_mounts_total{pack="leafbad",result="error"} ≥ 1`, func() bool {
			return tb.metric("ron_edge_pack_mounts_total", `pack="leafbad"`, `result="error"`) >= 1
		})
	})
	t.Run("raw requests", func(t *testing.T) { edgeRawRows(t, tb.edgeNode) })
	t.Run("origin answers", func(t *testing.T) { edgeOriginRows(t, tb) })
	t.Run("tile encodings", func(t *testing.T) { edgeEncodingRows(t, tb.edgeNode) })
}

// edgeRawRows: request targets net/http's client cannot send.
func edgeRawRows(t *testing.T, e *edgeNode) {
	rows := []struct {
		name   string
		req    string
		status int
		code   string
		reason string // details.reason ("" = not checked)
	}{
		{"absolute-form target", "GET http://other.example/ HTTP/1.1\r\nHost: other.example\r\n\r\n", 403, "forbidden", ""},
		{"absolute-form target to an asset", "GET http://other.example/assets/o/x HTTP/1.1\r\nHost: other.example\r\n\r\n", 403, "forbidden", ""},
		{"CONNECT", "CONNECT other.example:443 HTTP/1.1\r\nHost: other.example:443\r\n\r\n", 405, "method_not_allowed", "not_allowed"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			r := rawRequest(t, e.edge, []byte(row.req), 10*time.Second)
			if r.readErr != nil {
				t.Fatalf("no answer: %v", r.readErr)
			}
			env := wantError(t, row.name, r.httpResult, row.status, row.code)
			if got, _ := env.Error.Details["reason"].(string); row.reason != "" && got != row.reason {
				t.Errorf("details.reason %q, want %q (body %s)", got, row.reason, r.body)
			}
		})
	}
}

// edgeOriginRows: the rows about what the origin answers (docs/edge.md §13):
// an unquoted ETag is stored without a validator, a redirect to another
// host is relayed and never followed.
func edgeOriginRows(t *testing.T, tb *edgeTable) {
	first := tb.get(http.MethodGet, "/assets/o/unquoted", nil)
	if first.status != 200 || string(first.body) != "unquoted etag body" {
		t.Fatalf("GET /assets/o/unquoted: %d %q", first.status, first.body)
	}
	// The worker commits the entry as the first answer ends: a request
	// right after may still join that fill ("collapsed"); a hit follows.
	var last httpResult
	if !pollUntilEvery(edgeRemountLimit, edgePollEvery, func() bool {
		last = tb.get(http.MethodGet, "/assets/o/unquoted", nil)
		return last.status == 200 && strings.HasPrefix(last.header.Get("Cache-Status"), "ron-edge; hit")
	}) {
		t.Errorf("GET /assets/o/unquoted: %d, Cache-Status %q; want a stored hit", last.status, last.header.Get("Cache-Status"))
	}
	for _, inm := range []string{"abc", `"abc"`} {
		if r := tb.get(http.MethodGet, "/assets/o/unquoted", hdr("If-None-Match", inm)); r.status != 200 {
			t.Errorf("If-None-Match %s against an entry stored without a validator: %d, want 200", inm, r.status)
		}
	}
	if n := tb.origin.count("GET /unquoted"); n != 1 {
		t.Errorf("the origin saw %d GET /unquoted, want 1 (later requests are hits)", n)
	}
	if v := tb.metric("ron_edge_rejects_total", `reason="etag_invalid"`); v < 1 {
		t.Errorf(`ron_edge_rejects_total{reason="etag_invalid"} = %v, want ≥ 1`, v)
	}

	r := tb.get(http.MethodGet, "/assets/o/redirect", nil)
	if r.status != http.StatusFound || r.header.Get("Location") != "http://other.example/elsewhere" {
		t.Errorf("GET /assets/o/redirect: %d Location %q; want the origin's 302 relayed", r.status, r.header.Get("Location"))
	}
	if n := tb.origin.count("GET /elsewhere"); n != 0 {
		t.Errorf("the redirect was followed (%d requests for /elsewhere)", n)
	}
}

// edgeEncodingRows: `Accept-Encoding: gzip;q=0` for a gzip tile gives the
// decoded body without Content-Encoding, for a PMTiles and an MBTiles pack.
func edgeEncodingRows(t *testing.T, e *edgeNode) {
	for _, path := range []string{"/tiles/test_fixture_1/0/0/0.mvt", "/tiles/world_cities/0/0/0.pbf"} {
		t.Run(path, func(t *testing.T) {
			gz := e.get(http.MethodGet, path, hdr("Accept-Encoding", "gzip"))
			if gz.status != 200 || gz.header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("Accept-Encoding gzip: %d Content-Encoding %q, want 200 gzip", gz.status, gz.header.Get("Content-Encoding"))
			}
			plain := e.get(http.MethodGet, path, hdr("Accept-Encoding", "gzip;q=0"))
			if plain.status != 200 || plain.header.Get("Content-Encoding") != "" {
				t.Fatalf("Accept-Encoding gzip;q=0: %d Content-Encoding %q, want 200 without", plain.status, plain.header.Get("Content-Encoding"))
			}
			zr, err := gzip.NewReader(bytes.NewReader(gz.body))
			if err != nil {
				t.Fatal(err)
			}
			want, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(plain.body, want) {
				t.Errorf("decoded body (%d bytes) differs from the gunzipped tile (%d bytes)", len(plain.body), len(want))
			}
			for _, r := range []httpResult{gz, plain} {
				if !strings.Contains(r.header.Get("Vary"), "Accept-Encoding") {
					t.Errorf("Vary %q, want Accept-Encoding", r.header.Get("Vary"))
				}
			}
			if gz.header.Get("ETag") == plain.header.Get("ETag") {
				t.Errorf("gzip and identity answers share ETag %s", gz.header.Get("ETag"))
			}
		})
	}
}
