package storage

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/content"
	"github.com/ronhq/ron/roles/storage/storageapi"
)

// row is one row of docs/storage.md §10 sent to a live listener.
type row struct {
	name   string
	q      req
	status int
	code   string            // "" = not an error envelope
	header map[string]string // required response headers ("*" = present)
}

// tokenKind selects the token a row sends.
const (
	tokWrite = "write"
	tokAdmin = "admin"
	tokInv   = "inventory"
)

func (tr *testRole) tokenFor(kind string) string {
	switch kind {
	case tokWrite:
		return tr.token(storageapi.ScopeWrite)
	case tokAdmin:
		return tr.token(storageapi.ScopeAdmin)
	case tokInv:
		return tr.token(storageapi.ScopeInventory)
	}
	return kind
}

func badInputRows() []row {
	hex := helloID[3:]
	hello := "/o/" + helloID
	empty := "/o/" + emptyID
	rows := []row{
		{name: "B3 prefix", q: req{method: "GET", path: "/o/B3:" + hex}, status: 400, code: httpx.CodeBadRequest},
		{name: "uppercase hex", q: req{method: "GET", path: "/o/b3:" + strings.ToUpper(hex)}, status: 400, code: httpx.CodeBadRequest},
		{name: "63 hex", q: req{method: "GET", path: "/o/b3:" + hex[:63]}, status: 400, code: httpx.CodeBadRequest},
		{name: "65 hex", q: req{method: "GET", path: "/o/b3:" + hex + "0"}, status: 400, code: httpx.CodeBadRequest},
		{name: "bare hex", q: req{method: "GET", path: "/o/" + hex}, status: 400, code: httpx.CodeBadRequest},
		{name: "non-hex", q: req{method: "GET", path: "/o/b3:" + strings.Repeat("g", 64)}, status: 400, code: httpx.CodeBadRequest},
		{name: "PUT bad id", q: req{method: "PUT", path: "/o/b3:xyz", token: tokWrite, body: strings.NewReader("x")}, status: 400, code: httpx.CodeBadRequest},
		{name: "outboard bad id", q: req{method: "GET", path: "/o/B3:" + hex + "/outboard"}, status: 400, code: httpx.CodeBadRequest},
		{name: "slice bad id", q: req{method: "GET", path: "/o/b3:" + hex[:63] + "/slice?start=0&len=1"}, status: 400, code: httpx.CodeBadRequest},
		{name: "slice without start", q: req{method: "GET", path: hello + "/slice?len=1"}, status: 400, code: httpx.CodeBadRequest},
		{name: "slice without len", q: req{method: "GET", path: hello + "/slice?start=0"}, status: 400, code: httpx.CodeBadRequest},
		{name: "slice len 0", q: req{method: "GET", path: hello + "/slice?start=0&len=0"}, status: 400, code: httpx.CodeBadRequest},
		{name: "slice start -1", q: req{method: "GET", path: hello + "/slice?start=-1&len=1"}, status: 400, code: httpx.CodeBadRequest},
		{name: "slice len 1e3", q: req{method: "GET", path: hello + "/slice?start=0&len=1e3"}, status: 400, code: httpx.CodeBadRequest},
		{name: "slice start 0x10", q: req{method: "GET", path: hello + "/slice?start=0x10&len=1"}, status: 400, code: httpx.CodeBadRequest},
		{name: "slice past the end", q: req{method: "GET", path: hello + "/slice?start=5&len=7"}, status: 416, code: httpx.CodeRangeNotSatisfiable,
			header: map[string]string{"Content-Range": "bytes */11"}},
		{name: "slice of the empty object", q: req{method: "GET", path: empty + "/slice?start=0&len=1"}, status: 416, code: httpx.CodeRangeNotSatisfiable},
		{name: "slice of a missing object", q: req{method: "GET", path: "/o/" + hex16ID + "/slice?start=0&len=1"}, status: 404, code: httpx.CodeNotFound},
		{name: "chunks gone", q: req{method: "GET", path: hello + "/chunks"}, status: 410, code: httpx.CodeGone},
		{name: "chunks gone on HEAD", q: req{method: "HEAD", path: hello + "/chunks"}, status: 410},
		{name: "trailing slash", q: req{method: "GET", path: hello + "/"}, status: 404, code: httpx.CodeNotFound},
		{name: "other suffix", q: req{method: "GET", path: hello + "/other"}, status: 404, code: httpx.CodeNotFound},
		{name: "unknown path", q: req{method: "GET", path: "/nope"}, status: 404, code: httpx.CodeNotFound},
		{name: "PATCH", q: req{method: "PATCH", path: hello}, status: 405, code: httpx.CodeMethodNotAllowed, header: map[string]string{"Allow": "*"}},
		{name: "GET /o", q: req{method: "GET", path: "/o"}, status: 405, code: httpx.CodeMethodNotAllowed, header: map[string]string{"Allow": "*"}},
		{name: "hash mismatch", q: req{method: "PUT", path: "/o/" + hex16ID, token: tokWrite, body: strings.NewReader("not it")}, status: 409, code: httpx.CodeHashMismatch},
		{name: "too large", q: req{method: "POST", path: "/o", token: tokWrite, body: strings.NewReader(strings.Repeat("x", 2000))}, status: 413, code: httpx.CodePayloadTooLarge},
		{name: "chunked too large", q: req{method: "POST", path: "/o", token: tokWrite, body: io.MultiReader(strings.NewReader(strings.Repeat("x", 2000))), length: -1}, status: 413, code: httpx.CodePayloadTooLarge},
		{name: "gzip", q: req{method: "POST", path: "/o", token: tokWrite, body: strings.NewReader("x"), header: []string{"Content-Encoding", "gzip"}}, status: 415, code: httpx.CodeUnsupportedMedia},
		{name: "br", q: req{method: "POST", path: "/o", token: tokWrite, body: strings.NewReader("x"), header: []string{"Content-Encoding", "br"}}, status: 415, code: httpx.CodeUnsupportedMedia},
		{name: "multipart", q: req{method: "POST", path: "/o", token: tokWrite, body: strings.NewReader("x"), header: []string{"Content-Type", "multipart/form-data; boundary=x"}}, status: 415, code: httpx.CodeUnsupportedMedia},
		{name: "unparsable type", q: req{method: "POST", path: "/o", token: tokWrite, body: strings.NewReader("x"), header: []string{"Content-Type", "text/plain; charset"}}, status: 400, code: httpx.CodeBadRequest},
		{name: "long type", q: req{method: "POST", path: "/o", token: tokWrite, body: strings.NewReader("x"), header: []string{"Content-Type", "text/" + strings.Repeat("a", 251)}}, status: 400, code: httpx.CodeBadRequest},
		{name: "no token", q: req{method: "POST", path: "/o", body: strings.NewReader("x")}, status: 401, code: httpx.CodeUnauthorized, header: map[string]string{"WWW-Authenticate": "Bearer"}},
		{name: "bad token", q: req{method: "POST", path: "/o", token: "bm90LWEtdG9rZW4", body: strings.NewReader("x")}, status: 401, code: httpx.CodeUnauthorized, header: map[string]string{"WWW-Authenticate": "Bearer"}},
		{name: "expired token", q: req{method: "POST", path: "/o", token: "expired", body: strings.NewReader("x")}, status: 401, code: httpx.CodeUnauthorized, header: map[string]string{"WWW-Authenticate": "Bearer"}},
		{name: "scope", q: req{method: "POST", path: "/o", token: tokInv, body: strings.NewReader("x")}, status: 403, code: httpx.CodeForbidden},
		{name: "inventory after", q: req{method: "GET", path: "/inventory?after=xyz", token: tokInv}, status: 400, code: httpx.CodeBadRequest},
		{name: "limit 0", q: req{method: "GET", path: "/inventory?limit=0", token: tokInv}, status: 400, code: httpx.CodeBadRequest},
		{name: "limit 10001", q: req{method: "GET", path: "/inventory?limit=10001", token: tokInv}, status: 400, code: httpx.CodeBadRequest},
		{name: "limit abc", q: req{method: "GET", path: "/inventory?limit=abc", token: tokInv}, status: 400, code: httpx.CodeBadRequest},
		{name: "inventory unknown param", q: req{method: "GET", path: "/inventory?limit=1&foo=bar", token: tokInv}, status: 200},
		{name: "has 0 ids", q: req{method: "POST", path: "/inventory/has", token: tokInv, body: strings.NewReader(`{"ids":[]}`)}, status: 400, code: httpx.CodeBadRequest},
		{name: "has 1001 ids", q: req{method: "POST", path: "/inventory/has", token: tokInv, body: strings.NewReader(`{"ids":[` + strings.Repeat(`"`+helloID+`",`, 1000) + `"` + helloID + `"]}`)}, status: 400, code: httpx.CodeBadRequest},
		{name: "has unknown field", q: req{method: "POST", path: "/inventory/has", token: tokInv, body: strings.NewReader(`{"ids":["` + helloID + `"],"x":1}`)}, status: 400, code: httpx.CodeMalformed},
		{name: "has bad JSON", q: req{method: "POST", path: "/inventory/has", token: tokInv, body: strings.NewReader(`{"ids":`)}, status: 400, code: httpx.CodeMalformed},
		{name: "has bad id", q: req{method: "POST", path: "/inventory/has", token: tokInv, body: strings.NewReader(`{"ids":["b3:x"]}`)}, status: 400, code: httpx.CodeBadRequest},
		{name: "empty body stored", q: req{method: "POST", path: "/o", token: tokWrite, body: http.NoBody}, status: 200},
		{name: "GET unknown query", q: req{method: "GET", path: hello + "?x=1"}, status: 200},
	}
	return append(rows, rangeRows(hello, empty)...)
}

// rangeRows are the Range and conditional rows of docs/storage.md §10 on "hello world"
// (N = 11) and the empty object.
func rangeRows(hello, empty string) []row {
	unsat := map[string]string{"Content-Range": "bytes */11"}
	get := func(name, path string, status int, code string, hdr map[string]string, h ...string) row {
		return row{name: name, q: req{method: "GET", path: path, header: h}, status: status, code: code, header: hdr}
	}
	many := "bytes=" + strings.TrimSuffix(strings.Repeat("0-0,", 17), ",")
	return []row{
		get("range 5-2", hello, 416, httpx.CodeRangeNotSatisfiable, unsat, "Range", "bytes=5-2"),
		get("range x-", hello, 416, httpx.CodeRangeNotSatisfiable, unsat, "Range", "bytes=x-"),
		get("range empty", hello, 416, httpx.CodeRangeNotSatisfiable, unsat, "Range", "bytes="),
		get("range N-", hello, 416, httpx.CodeRangeNotSatisfiable, unsat, "Range", "bytes=11-"),
		get("range -0", hello, 416, httpx.CodeRangeNotSatisfiable, unsat, "Range", "bytes=-0"),
		get("range on empty", empty, 200, "", nil, "Range", "bytes=-5"),
		get("range items", hello, 200, "", nil, "Range", "items=0-1"),
		get("17 ranges", hello, 200, "", nil, "Range", many),
		get("ranges past N", hello, 200, "", nil, "Range", "bytes=0-9,1-10"),
		get("single range", hello, 206, "", map[string]string{"Content-Range": "bytes 0-4/11", "Content-Length": "5"}, "Range", "bytes=0-4"),
		get("if-range weak", hello, 200, "", nil, "Range", "bytes=0-4", "If-Range", `W/"`+helloID+`"`),
		get("if-range other", hello, 200, "", nil, "Range", "bytes=0-4", "If-Range", `"other"`),
		get("if-range date", hello, 200, "", nil, "Range", "bytes=0-4", "If-Range", "Sat, 01 Jan 2000 00:00:00 GMT"),
		get("if-none-match strong", hello, 304, "", map[string]string{"ETag": `"` + helloID + `"`}, "If-None-Match", `"`+helloID+`"`),
		get("if-none-match weak", hello, 304, "", nil, "If-None-Match", `W/"`+helloID+`"`),
		get("if-none-match star", hello, 304, "", nil, "If-None-Match", "*"),
		get("if-match other", hello, 412, httpx.CodePreconditionFailed, nil, "If-Match", `"other"`),
		{name: "HEAD range", q: req{method: "HEAD", path: hello, header: []string{"Range", "bytes=0-4"}}, status: 200,
			header: map[string]string{"Content-Length": "11"}},
		get("GET headers", hello, 200, "", map[string]string{"ETag": `"` + helloID + `"`, "Cache-Control": content.Immutable,
			"Accept-Ranges": "bytes", "X-Content-Type-Options": "nosniff", "Content-Type": "application/octet-stream", "Content-Length": "11"}),
	}
}

func TestBadInputTable(t *testing.T) {
	tr := startRole(t, func(c *Config) { c.MaxObjectBytes = 1000 })
	tr.put([]byte("hello world"), "")
	tr.put(nil, "")
	for _, rw := range badInputRows() {
		t.Run(rw.name, func(t *testing.T) {
			q := rw.q
			if q.token == "expired" {
				q.token = tr.expiredToken()
			} else {
				q.token = tr.tokenFor(q.token)
			}
			resp, body := tr.do(q)
			checkRow(t, rw, resp, body)
		})
	}
}

func checkRow(t *testing.T, rw row, resp *http.Response, body []byte) {
	t.Helper()
	if rw.code != "" {
		wantError(t, resp, body, rw.status, rw.code)
	} else if resp.StatusCode != rw.status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, rw.status, body)
	}
	for k, v := range rw.header {
		got := resp.Header.Get(k)
		if (v == "*" && got == "") || (v != "*" && got != v) {
			t.Fatalf("header %s = %q, want %q", k, got, v)
		}
	}
	if resp.StatusCode == 200 || resp.StatusCode == 206 || resp.StatusCode == 304 {
		if resp.Header.Get("Last-Modified") != "" || resp.Header.Get("Vary") != "" {
			t.Fatalf("Last-Modified or Vary set: %v", resp.Header)
		}
	}
}

// rawRequest writes raw HTTP/1.1 to the listener and returns the status
// line and the body (the connection is closed by the request).
func rawRequest(t *testing.T, tr *testRole, raw string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", tr.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

func TestMalformedContentLength(t *testing.T) {
	tr := startRole(t, nil)
	for _, cl := range []string{"abc", "-1", "1x"} {
		resp, body := rawRequest(t, tr, "POST /o HTTP/1.1\r\nHost: x\r\nContent-Length: "+cl+"\r\nConnection: close\r\n\r\n")
		if resp.StatusCode != 400 || bytes.HasPrefix(body, []byte("{")) {
			t.Fatalf("Content-Length %s: %d %q", cl, resp.StatusCode, body)
		}
	}
}
