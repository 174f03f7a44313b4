package e2e

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ronhq/ron/store/bao"
	"github.com/ronhq/ron/store/storetest"
)

// wantObjectHeaders checks the headers every 200/206/304 carries.
func wantObjectHeaders(t *testing.T, what string, r httpResult, id string) {
	t.Helper()
	want := map[string]string{
		"ETag":                   `"` + id + `"`,
		"Cache-Control":          "public, max-age=31536000, immutable",
		"Accept-Ranges":          "bytes",
		"X-Content-Type-Options": "nosniff",
	}
	for k, v := range want {
		if got := r.header.Get(k); got != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got, v)
		}
	}
	for _, k := range []string{"Last-Modified", "Vary", "Content-Encoding"} {
		if got := r.header.Get(k); got != "" {
			t.Errorf("%s: unexpected %s: %q", what, k, got)
		}
	}
}

// TestRangeAndConditionals sends Range and conditional requests over the
// wire against a stored object (docs/storage.md §4).
func TestRangeAndConditionals(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	data := randomBytes(7, 200_000) // 4 chunks, the last one short
	id := n.post(n.token("storage:write"), data).CID
	N := len(data)
	size := strconv.Itoa(N)
	u := n.url("/o/" + id)
	etag := `"` + id + `"`

	get := func(kv ...string) httpResult { return do(t, http.MethodGet, u, hdr(kv...), nil) }
	wantPartial := func(what string, r httpResult, a, b int) {
		t.Helper()
		if r.status != http.StatusPartialContent {
			t.Errorf("%s: status %d, want 206 (%s)", what, r.status, r.body)
			return
		}
		wantObjectHeaders(t, what, r, id)
		if got, want := r.header.Get("Content-Range"), fmt.Sprintf("bytes %d-%d/%d", a, b, N); got != want {
			t.Errorf("%s: Content-Range %q, want %q", what, got, want)
		}
		if got := r.header.Get("Content-Length"); got != strconv.Itoa(b-a+1) {
			t.Errorf("%s: Content-Length %q, want %d", what, got, b-a+1)
		}
		if !bytes.Equal(r.body, data[a:b+1]) {
			t.Errorf("%s: body differs from bytes %d-%d", what, a, b)
		}
	}
	wantFull := func(what string, r httpResult) {
		t.Helper()
		if r.status != http.StatusOK {
			t.Errorf("%s: status %d, want 200 (%s)", what, r.status, r.body)
			return
		}
		wantObjectHeaders(t, what, r, id)
		if r.header.Get("Content-Range") != "" {
			t.Errorf("%s: 200 with Content-Range %q", what, r.header.Get("Content-Range"))
		}
		if r.header.Get("Content-Length") != size || !bytes.Equal(r.body, data) {
			t.Errorf("%s: Content-Length %q, body %d bytes; want the whole %d-byte object", what, r.header.Get("Content-Length"), len(r.body), N)
		}
	}
	want416 := func(what string, r httpResult) {
		t.Helper()
		wantError(t, what, r, http.StatusRequestedRangeNotSatisfiable, "range_not_satisfiable")
		if got := r.header.Get("Content-Range"); got != "bytes */"+size {
			t.Errorf("%s: Content-Range %q, want %q", what, got, "bytes */"+size)
		}
	}

	wantFull("plain GET", get())
	if r := get(); r.header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("Content-Type %q, want application/octet-stream", r.header.Get("Content-Type"))
	}
	wantPartial("single bytes=0-99", get("Range", "bytes=0-99"), 0, 99)
	wantPartial("single across chunks", get("Range", "bytes=65530-65545"), 65530, 65545)
	wantPartial("suffix bytes=-100", get("Range", "bytes=-100"), N-100, N-1)
	wantPartial("suffix longer than the object", get("Range", "bytes=-300000"), 0, N-1)
	wantPartial("open bytes=150000-", get("Range", "bytes=150000-"), 150000, N-1)
	wantPartial("end clipped", get("Range", "bytes=199990-999999"), 199990, N-1)
	wantPartial("unit case-insensitive", get("Range", "BYTES=1-2"), 1, 2)
	wantPartial("If-Range strong match", get("Range", "bytes=10-19", "If-Range", etag), 10, 19)

	// Multi-range: parts in request order, each with its Content-Range.
	r := get("Range", "bytes=70000-70009,0-9,-5")
	if r.status != http.StatusPartialContent {
		t.Fatalf("multi-range: status %d (%s)", r.status, r.body)
	}
	mt, params, err := mime.ParseMediaType(r.header.Get("Content-Type"))
	if err != nil || mt != "multipart/byteranges" {
		t.Fatalf("multi-range Content-Type %q (%v)", r.header.Get("Content-Type"), err)
	}
	if b := params["boundary"]; len(b) != 30 || strings.Trim(b, "0123456789abcdef") != "" {
		t.Errorf("boundary %q, want 30 hex digits", b)
	}
	if r.header.Get("Content-Length") != strconv.Itoa(len(r.body)) {
		t.Errorf("multi-range Content-Length %q, body %d bytes", r.header.Get("Content-Length"), len(r.body))
	}
	wantObjectHeaders(t, "multi-range", r, id)
	mr := multipart.NewReader(bytes.NewReader(r.body), params["boundary"])
	parts := [][2]int{{70000, 70009}, {0, 9}, {N - 5, N - 1}}
	for i, p := range parts {
		part, err := mr.NextPart()
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
		if got, want := part.Header.Get("Content-Range"), fmt.Sprintf("bytes %d-%d/%d", p[0], p[1], N); got != want {
			t.Errorf("part %d Content-Range %q, want %q", i, got, want)
		}
		if got := part.Header.Get("Content-Type"); got != "application/octet-stream" {
			t.Errorf("part %d Content-Type %q", i, got)
		}
		body, err := io.ReadAll(part)
		if err != nil || !bytes.Equal(body, data[p[0]:p[1]+1]) {
			t.Errorf("part %d: body %d bytes (%v), want bytes %d-%d", i, len(body), err, p[0], p[1])
		}
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("after %d parts: %v, want EOF", len(parts), err)
	}

	// Unsatisfiable and malformed ranges.
	for _, rg := range []string{"bytes=" + size + "-", "bytes=-0", "bytes=5-2", "bytes=x-", "bytes=", "bytes=300000-300001"} {
		want416("Range: "+rg, get("Range", rg))
	}
	// Ranges ignored: other unit, too many parts, more than the object.
	wantFull("Range: items=0-1", get("Range", "items=0-1"))
	var many []string
	for i := range 17 {
		many = append(many, fmt.Sprintf("%d-%d", i*10, i*10+1))
	}
	wantFull("17 ranges", get("Range", "bytes="+strings.Join(many, ",")))
	wantFull("ranges totalling more than N", get("Range", "bytes=0-150000,100000-199999"))

	// Conditionals.
	for _, inm := range []string{etag, "W/" + etag, "*", `"b3:other", ` + etag} {
		r := get("If-None-Match", inm)
		if r.status != http.StatusNotModified || len(r.body) != 0 {
			t.Errorf("If-None-Match %s: status %d, %d body bytes; want 304 and no body", inm, r.status, len(r.body))
		} else {
			wantObjectHeaders(t, "304", r, id)
		}
	}
	wantFull("If-None-Match other", get("If-None-Match", `"b3:other"`))
	wantError(t, `If-Match "other"`, get("If-Match", `"other"`), http.StatusPreconditionFailed, "precondition_failed")
	wantFull("If-Match strong", get("If-Match", etag))
	wantFull("If-Match *", get("If-Match", "*"))
	for _, ir := range []string{"W/" + etag, `"b3:other"`, "Sat, 01 Jan 2000 00:00:00 GMT"} {
		wantFull("If-Range "+ir, get("Range", "bytes=0-9", "If-Range", ir))
	}
	wantFull("If-Modified-Since ignored", get("If-Modified-Since", "Sat, 01 Jan 2000 00:00:00 GMT"))

	// HEAD: same headers, no body, Range and If-Range ignored.
	head := func(kv ...string) httpResult { return do(t, http.MethodHead, u, hdr(kv...), nil) }
	for _, h := range [][]string{nil, {"Range", "bytes=0-9"}, {"Range", "bytes=5-2"}, {"Range", "bytes=0-9", "If-Range", etag}} {
		r := head(h...)
		if r.status != http.StatusOK || r.header.Get("Content-Length") != size || len(r.body) != 0 || r.header.Get("Content-Range") != "" {
			t.Errorf("HEAD %v: status %d, Content-Length %q, Content-Range %q, %d body bytes; want 200, %s, none, 0",
				h, r.status, r.header.Get("Content-Length"), r.header.Get("Content-Range"), len(r.body), size)
		}
	}
	if r := head("If-None-Match", etag); r.status != http.StatusNotModified {
		t.Errorf("HEAD If-None-Match: %d, want 304", r.status)
	}
	if r := head("If-Match", `"other"`); r.status != http.StatusPreconditionFailed {
		t.Errorf("HEAD If-Match other: %d, want 412", r.status)
	}

	// The outboard, a slice across a group boundary, and the removed list.
	r = do(t, http.MethodGet, u+"/outboard", nil, nil)
	if r.status != http.StatusOK || r.header.Get("ETag") != `"`+id+`/outboard"` || !bytes.Equal(r.body, storetest.ExpectedOutboard(data)) {
		t.Errorf("GET outboard: %d, ETag %q, %d bytes", r.status, r.header.Get("ETag"), len(r.body))
	}
	r = do(t, http.MethodGet, u+"/slice?start=65000&len=1000", nil, nil)
	var got bytes.Buffer
	if err := bao.VerifySlice(&got, bytes.NewReader(r.body), storetest.MustID(t, id), 65000, 1000); r.status != http.StatusOK ||
		err != nil || !bytes.Equal(got.Bytes(), data[65000:66000]) {
		t.Errorf("GET slice: %d, %v", r.status, err)
	}
	wantError(t, "GET chunks", do(t, http.MethodGet, u+"/chunks", nil, nil), http.StatusGone, "gone")
}

// flipByte inverts one byte of a file in place.
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open stored chunk: %v", err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// wantQuarantined checks that id now answers 404 quarantined and that its
// file moved to quarantine/.
func wantQuarantined(t *testing.T, n *node, id string) {
	t.Helper()
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		r := do(t, m, n.url("/o/"+id), nil, nil)
		if m == http.MethodHead {
			if r.status != http.StatusNotFound {
				t.Errorf("HEAD after quarantine: %d, want 404", r.status)
			}
			continue
		}
		env := wantError(t, "GET after quarantine", r, http.StatusNotFound, "not_found")
		if env.Error.Details["reason"] != "quarantined" {
			t.Errorf("GET after quarantine: details %v, want reason quarantined", env.Error.Details)
		}
	}
	if _, err := os.Stat(n.objectPath(id)); !os.IsNotExist(err) {
		t.Errorf("the corrupt data file is still in objects/ (%v)", err)
	}
	hexID := strings.TrimPrefix(id, "b3:")
	q, _ := filepath.Glob(filepath.Join(n.storageDir(), "quarantine", hexID+".*"))
	data := 0
	for _, p := range q {
		if !strings.HasSuffix(p, ".meta") {
			data++
		}
	}
	if data != 1 {
		t.Errorf("quarantine/ holds %v for %s, want one data file", q, id[:11])
	}
	inv := n.inventory(n.token("storage:read_inventory"))
	if _, ok := inv[id]; ok {
		t.Errorf("a quarantined object is listed in /inventory")
	}
}

// TestCorruptChunk flips a byte of a stored chunk on disk: in the first
// chunk the GET answers 500 corrupt; in a later chunk the response is cut
// short. Both objects end up quarantined and counted.
func TestCorruptChunk(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	tok := n.token("storage:write")
	first := n.post(tok, vector()).CID
	later := n.post(tok, randomBytes(11, 5*65536+1000)).CID
	intact := n.post(tok, randomBytes(12, 3*65536)).CID

	flipByte(t, n.objectPath(first), 1234) // chunk 0
	r := do(t, http.MethodGet, n.url("/o/"+first), nil, nil)
	wantError(t, "GET with a corrupt first chunk", r, http.StatusInternalServerError, "corrupt")
	wantQuarantined(t, n, first)

	flipByte(t, n.objectPath(later), 3*65536+17) // chunk 3 of 6
	r = do(t, http.MethodGet, n.url("/o/"+later), nil, nil)
	if r.status != http.StatusOK {
		t.Errorf("GET with a corrupt later chunk: status %d, want 200 then a cut (%s)", r.status, r.body)
	}
	if r.err == nil {
		t.Errorf("GET with a corrupt later chunk: a complete-looking body of %d bytes, want a short read", len(r.body))
	}
	if len(r.body) > 3*65536 {
		t.Errorf("GET with a corrupt later chunk: %d bytes arrived, more than the 3 good chunks", len(r.body))
	}
	wantQuarantined(t, n, later)

	// A Range over a corrupt chunk of another object: 500 before headers.
	flipByte(t, n.objectPath(intact), 2*65536+5)
	r = do(t, http.MethodGet, n.url("/o/"+intact), hdr("Range", "bytes=131072-131100"), nil)
	wantError(t, "Range over a corrupt chunk", r, http.StatusInternalServerError, "corrupt")
	wantQuarantined(t, n, intact)

	if v := n.metric("ron_storage_corruptions_total", `role="storage"`, `kind="data"`); v < 3 {
		t.Errorf(`ron_storage_corruptions_total{role="storage",kind="data"} = %v, want ≥ 3`, v)
	}
	// Re-uploading the good bytes heals the id.
	n.post(tok, vector())
	if r := do(t, http.MethodGet, n.url("/o/"+first), nil, nil); r.status != http.StatusOK || !bytes.Equal(r.body, vector()) {
		t.Errorf("GET after re-upload: %d, %d bytes", r.status, len(r.body))
	}
}
