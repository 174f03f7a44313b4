// Package gatewaytest is the gateway's shared request table
// (docs/gateway.md §12): the same rows run against the gateway with
// in-process upstreams, with upstreams over HTTP in one test process, and
// against separate ron processes in e2e.
package gatewaytest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/bao"
	"github.com/ronhq/ron/store/manifest"
	"github.com/ronhq/ron/store/verified"
)

// SuspendedTenant must be configured with rps = 0; anonymous clients must
// have an rps high enough for the table (anon_rps = 1e6).
const SuspendedTenant = "frozen"

// Target is a gateway under test: its base URL and a way to mint client
// tokens it accepts.
type Target struct {
	Name  string
	Base  string
	Token func(t *testing.T, tenant string, scopes ...string) string
}

// noRedirects is the table's client: redirects are answers under test.
var noRedirects = &http.Client{CheckRedirect: client.NoRedirects}

// Run runs the table against tg: it stores an object and a small site
// through the gateway, then checks every row's status and envelope code.
func Run(t *testing.T, tg Target) {
	for _, c := range table(t, tg) {
		t.Run(c.name, func(t *testing.T) {
			resp, body := tg.do(t, c)
			if resp.StatusCode != c.status || envelopeCode(body) != c.code {
				t.Fatalf("%s %s: %d %q, want %d %q; body %.300s", c.method, c.path, resp.StatusCode,
					envelopeCode(body), c.status, c.code, body)
			}
			if resp.Header.Get("X-Corr-ID") == "" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("missing X-Corr-ID or nosniff: %v", resp.Header)
			}
			if c.check != nil {
				c.check(t, resp, body)
			}
		})
	}
}

// row is one row of the shared table.
type row struct {
	name   string
	method string
	path   string
	body   []byte
	header map[string]string
	token  []string // tenant then scopes; nil = anonymous
	status int
	code   string // envelope code, "" = not an error
	check  func(t *testing.T, resp *http.Response, body []byte)
}

func (w Target) do(t *testing.T, c row) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(c.method, w.Base+c.path, bytes.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	if c.body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	if c.token != nil {
		req.Header.Set("Authorization", "Bearer "+w.Token(t, c.token[0], c.token[1:]...))
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

func envelopeCode(body []byte) string {
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &env)
	return env.Error.Code
}

// gatewayTable stores what the rows read (an object, a site and its name)
// through w and returns the rows.
func table(t *testing.T, w Target) []row {
	hello := []byte("hello through the gateway")
	id := store.Sum(hello)
	put := func(body []byte, typ string) store.ID {
		resp, data := w.do(t, row{method: "POST", path: "/o", body: body, header: map[string]string{"Content-Type": typ},
			token: []string{"", "storage:write"}})
		if resp.StatusCode != 201 && resp.StatusCode != 200 {
			t.Fatalf("put through %s: %d %s", w.Name, resp.StatusCode, data)
		}
		return store.Sum(body)
	}
	put(hello, "text/plain")
	site := publishSite(t, w, put)
	write := []string{"", "storage:write"}
	bomb := gzipBytes(t, bytes.Repeat([]byte{' '}, 12<<20))
	corrupt := gzipBytes(t, []byte(`{"b3":"`+id.String()+`"}`))
	corrupt = corrupt[:len(corrupt)-6]
	rows := []row{
		{name: "get object", method: "GET", path: "/o/" + id.String(), status: 200,
			check: bodyIs(hello)},
		{name: "head object", method: "HEAD", path: "/o/" + id.String(), status: 200,
			check: headerIs("Content-Length", fmt.Sprint(len(hello)))},
		{name: "range", method: "GET", path: "/o/" + id.String(), header: map[string]string{"Range": "bytes=0-4"}, status: 206,
			check: bodyIs(hello[:5])},
		{name: "local 304", method: "GET", path: "/o/" + id.String(), header: map[string]string{"If-None-Match": `W/"` + id.String() + `"`},
			status: 304, check: headerIs("Cache-Control", "public, max-age=31536000, immutable")},
		{name: "unknown object", method: "GET", path: "/o/" + store.Sum([]byte("nope")).String(), status: 404, code: "not_found"},
		{name: "uppercase id", method: "GET", path: "/o/B3:" + strings.ToUpper(id.String()[3:]), status: 400, code: "bad_request"},
		{name: "short id", method: "GET", path: "/o/b3:abc", status: 400, code: "bad_request"},
		{name: "slash in id", method: "GET", path: "/o/b3%3A" + id.String()[3:10] + "%2F" + id.String()[11:], status: 400, code: "bad_request"},
		{name: "outboard", method: "GET", path: "/o/" + id.String() + "/outboard", status: 200,
			check: all(bodyIs(verified.TreeOf(hello).Outboard), headerIs("ETag", `"`+id.String()+`/outboard"`))},
		{name: "outboard head", method: "HEAD", path: "/o/" + id.String() + "/outboard", status: 200,
			check: headerIs("Content-Length", fmt.Sprint(bao.OutboardSize(int64(len(hello)))))},
		{name: "slice", method: "GET", path: "/o/" + id.String() + "/slice?start=6&len=7", status: 200,
			check: sliceIs(id, 6, hello[6:13])},
		{name: "slice bad query", method: "GET", path: "/o/" + id.String() + "/slice?start=x&len=1", status: 400, code: "bad_request"},
		{name: "chunks gone", method: "GET", path: "/o/" + id.String() + "/chunks", status: 410, code: "gone"},
		{name: "write without token", method: "POST", path: "/o", body: hello, status: 401, code: "unauthorized"},
		{name: "write wrong scope", method: "POST", path: "/o", body: hello, token: []string{"", "index:write"}, status: 403, code: "forbidden"},
		{name: "bad token", method: "GET", path: "/o/" + id.String(), header: map[string]string{"Authorization": "Bearer nonsense"}, status: 401, code: "unauthorized"},
		{name: "encoded upload", method: "POST", path: "/o", body: gzipBytes(t, hello), header: map[string]string{"Content-Encoding": "gzip"},
			token: write, status: 415, code: "unsupported_media_type"},
		{name: "hash mismatch", method: "PUT", path: "/o/" + store.Sum([]byte("other")).String(), body: hello, token: write, status: 409, code: "hash_mismatch"},
		{name: "delete object", method: "DELETE", path: "/o/" + id.String(), status: 405, code: "method_not_allowed"},
		{name: "post names", method: "POST", path: "/names/x", status: 405, code: "method_not_allowed"},
		{name: "suspended tenant", method: "GET", path: "/o/" + id.String(), token: []string{SuspendedTenant, "storage:read"}, status: 403, code: "forbidden"},
		{name: "request timeout abc", method: "GET", path: "/o/" + id.String(), header: map[string]string{"Request-Timeout": "abc"}, status: 400, code: "bad_request"},
		{name: "request timeout 99999", method: "GET", path: "/o/" + id.String(), header: map[string]string{"Request-Timeout": "99999"}, status: 400, code: "bad_request"},
		{name: "resolve name", method: "GET", path: "/resolve/" + site, status: 200},
		{name: "resolve bad key", method: "GET", path: "/resolve/Bad_Name", status: 400, code: "bad_request"},
		{name: "name record", method: "GET", path: "/names/" + site, status: 200},
		{name: "name versions", method: "GET", path: "/names/" + site + "/versions", status: 200},
		{name: "name bad", method: "GET", path: "/names/my_site", status: 400, code: "bad_request"},
		{name: "names gzip bomb", method: "PUT", path: "/names/bomb", body: bomb, header: map[string]string{"Content-Encoding": "gzip", "Content-Type": "application/json"},
			token: []string{"", "index:write"}, status: 413, code: "decoded_cap"},
		{name: "names corrupt gzip", method: "PUT", path: "/names/bomb", body: corrupt, header: map[string]string{"Content-Encoding": "gzip", "Content-Type": "application/json"},
			token: []string{"", "index:write"}, status: 400, code: "malformed"},
		{name: "names deflate", method: "PUT", path: "/names/bomb", body: []byte("{}"), header: map[string]string{"Content-Encoding": "deflate"},
			token: []string{"", "index:write"}, status: 415, code: "unsupported_media_type"},
		{name: "site index", method: "GET", path: "/n/" + site + "/", status: 200, check: bodyIs([]byte("<h1>home</h1>"))},
		{name: "site redirect", method: "GET", path: "/n/" + site + "?q=1", status: 301, check: headerIs("Location", "/n/"+site+"/?q=1")},
		{name: "site asset", method: "GET", path: "/n/" + site + "/css/site.css", status: 200, check: headerIs("Content-Type", "text/css")},
		{name: "site listing", method: "GET", path: "/n/" + site + "/css/", status: 200, check: headerIs("Content-Type", "application/json")},
		{name: "site missing", method: "GET", path: "/n/" + site + "/nope.html", status: 404, code: "not_found"},
		{name: "site traversal", method: "GET", path: "/n/" + site + "/a/%2e%2e/x", status: 400, code: "bad_request"},
		{name: "site bad name", method: "GET", path: "/n/Blog.example/", status: 400, code: "bad_request"},
		{name: "registry bad version", method: "GET", path: "/registry/abc", status: 400, code: "bad_request"},
		{name: "registry negative", method: "GET", path: "/registry/-1", status: 400, code: "bad_request"},
		{name: "registry too big", method: "GET", path: "/registry/18446744073709551616", status: 400, code: "bad_request"},
		{name: "preflight", method: "OPTIONS", path: "/o/" + id.String(), header: map[string]string{"Origin": "https://a.example", "Access-Control-Request-Method": "GET"},
			status: 204, check: headerIs("Access-Control-Allow-Origin", "*")},
		{name: "too many fields", method: "GET", path: "/o/" + id.String(), header: manyHeaders(101), status: 431, code: "bad_request"},
	}
	return rows
}

// publishSite stores a two-file site and its manifest through the gateway,
// names it, and returns the name.
func publishSite(t *testing.T, w Target, put func([]byte, string) store.ID) string {
	t.Helper()
	index := []byte("<h1>home</h1>")
	css := []byte("body{}")
	m := manifest.ManifestV1{Entries: map[string]manifest.Entry{
		"index.html":   {ID: put(index, "text/html"), Size: int64(len(index)), Type: "text/html"},
		"css/site.css": {ID: put(css, "text/css"), Size: int64(len(css)), Type: "text/css"},
	}}
	mb, err := manifest.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	mid := put(mb, manifest.MediaType)
	name := "site-" + strings.ReplaceAll(w.Name, "-", "")
	body := fmt.Sprintf(`{"b3":%q}`, mid.String())
	resp, data := w.do(t, row{method: "PUT", path: "/names/" + name, body: []byte(body),
		header: map[string]string{"Content-Type": "application/json"}, token: []string{"", "index:write"}})
	if resp.StatusCode/100 != 2 {
		t.Fatalf("name the site: %d %s", resp.StatusCode, data)
	}
	return name
}

func gzipBytes(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func manyHeaders(n int) map[string]string {
	h := map[string]string{}
	for i := range n {
		h[fmt.Sprintf("X-Filler-%d", i)] = "x"
	}
	return h
}

func bodyIs(want []byte) func(*testing.T, *http.Response, []byte) {
	return func(t *testing.T, _ *http.Response, got []byte) {
		if !bytes.Equal(got, want) {
			t.Errorf("body %q, want %q", got, want)
		}
	}
}

// sliceIs checks a Bao slice of want's bytes at start of object id: it
// verifies with nothing but the id and yields want.
func sliceIs(id store.ID, start int64, want []byte) func(*testing.T, *http.Response, []byte) {
	return func(t *testing.T, _ *http.Response, got []byte) {
		var out bytes.Buffer
		if err := bao.VerifySlice(&out, bytes.NewReader(got), id, start, int64(len(want))); err != nil || !bytes.Equal(out.Bytes(), want) {
			t.Errorf("slice: %v, %q; want %q", err, out.Bytes(), want)
		}
	}
}

// all runs every check.
func all(checks ...func(*testing.T, *http.Response, []byte)) func(*testing.T, *http.Response, []byte) {
	return func(t *testing.T, resp *http.Response, body []byte) {
		for _, c := range checks {
			c(t, resp, body)
		}
	}
}

func headerIs(key, want string) func(*testing.T, *http.Response, []byte) {
	return func(t *testing.T, resp *http.Response, _ []byte) {
		if got := resp.Header.Get(key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
}
