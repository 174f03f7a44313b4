package sites

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/store/manifest"
)

func TestBadInput400(t *testing.T) {
	e := newEnv(t, Options{})
	e.publish("site", siteFiles)
	for _, target := range []string{
		"/n/Blog.example", "/n/my_site", "/n/site/../x", "/n/site/a%2Fb", "/n/site/a%2fb",
		"/n/site/%2e%2e/x", "/n/site/./x", "/n/site/%2E/x", "/n/site//x", "/n/site/a//b", "/n/site/a%5Cb",
		"/n/site/a%00b", "/n/site@0", "/n/site@01", "/n/site@-1", "/n/site@abc",
		"/n/site@", "/n/-site", "/n/site.", "/n/si..te", "/n/s%C3%A9te", "/n/site%2Fx", "/n/a@1@2",
		"/n/" + strings.Repeat("a", 64), "/n/site/..", "/n/site/x/..",
	} {
		t.Run(target, func(t *testing.T) {
			wantError(t, e.do(http.MethodGet, target), http.StatusBadRequest, httpx.CodeBadRequest, "")
		})
	}
	// Escapes the Go server would refuse still get a 400 when called directly.
	for _, c := range [][2]string{{"%zz", ""}, {"site", "/%zz"}, {"site", "/a%"}, {"site", "x"}} {
		w := httptest.NewRecorder()
		err := e.s.Serve(w, httptest.NewRequest(http.MethodGet, "/", nil), c[0], c[1], "")
		if he := httpx.AsError(err); he.Status != http.StatusBadRequest {
			t.Fatalf("Serve(%q, %q) = %v", c[0], c[1], err)
		}
	}
	if n := e.res.count("site") + e.obj.total(); n != 0 {
		t.Fatalf("bad input made %d upstream calls", n)
	}
}

func TestManifestRejected502(t *testing.T) {
	good := `"b3:` + strings.Repeat("ab", 32) + `"`
	for name, raw := range map[string]string{
		"unknown top field":   `{"version":1,"entries":{},"extra":1}`,
		"unknown entry field": `{"version":1,"entries":{"a":{"id":` + good + `,"size":1,"mode":"x"}}}`,
		"bad id":              `{"version":1,"entries":{"a":{"id":"b3:ABC","size":1}}}`,
		"uppercase id":        `{"version":1,"entries":{"a":{"id":"b3:` + strings.Repeat("AB", 32) + `","size":1}}}`,
		"dotdot key":          `{"version":1,"entries":{"../x":{"id":` + good + `,"size":1}}}`,
		"dot key":             `{"version":1,"entries":{"a/./x":{"id":` + good + `,"size":1}}}`,
		"leading slash":       `{"version":1,"entries":{"/x":{"id":` + good + `,"size":1}}}`,
		"backslash":           `{"version":1,"entries":{"a\\\\b":{"id":` + good + `,"size":1}}}`,
		"duplicate key":       `{"version":1,"entries":{},"entries":{}}`,
		"version 2":           `{"version":2,"entries":{}}`,
		"negative size":       `{"version":1,"entries":{"a":{"id":` + good + `,"size":-1}}}`,
		"not json":            `<html>`,
		"file and dir":        `{"version":1,"entries":{"a":{"id":` + good + `,"size":1},"a/b":{"id":` + good + `,"size":1}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, Options{})
			e.publishRaw("site", raw)
			for range 2 { // the second answer comes from the cached refusal
				wantError(t, e.do(http.MethodGet, "/n/site/"), http.StatusBadGateway, httpx.CodeMalformed, "manifest")
			}
			if n := e.obj.count("readall"); n != 1 {
				t.Fatalf("%d manifest reads, want 1 (refusal cached)", n)
			}
			if v := e.met.Values()[`ron_gateway_site_manifest_rejected_total{role="gateway"}`]; v != 1 {
				t.Fatalf("rejected counter %v", v)
			}
		})
	}
}

func TestManifestTooLargeAndMismatch(t *testing.T) {
	e := newEnv(t, Options{ManifestMaxBytes: 64})
	e.publishRaw("big", `{"version":1,"entries":{},"meta":{"k":"`+strings.Repeat("x", 100)+`"}}`)
	wantError(t, e.do(http.MethodGet, "/n/big/"), http.StatusBadGateway, httpx.CodeMalformed, "manifest")

	liar := idOf("the real manifest")
	e.obj.putAs(liar, []byte(`{"version":1,"entries":{}}`), manifest.MediaType)
	e.res.set("liar", liar)
	wantError(t, e.do(http.MethodGet, "/n/liar/"), http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "hash_mismatch")
}

func TestIndexHTMLAndEntries(t *testing.T) {
	e := newEnv(t, Options{CacheControl: "public, max-age=7"})
	e.publish("site", siteFiles)
	for _, c := range []struct{ target, body, ctype string }{
		{"/n/site/", "<h1>home</h1>", "text/html; charset=utf-8"},
		{"/n/site/index.html", "<h1>home</h1>", "text/html; charset=utf-8"},
		{"/n/site/docs/", "<h1>docs</h1>", "text/html"},
		{"/n/site/css/site.css", "body{}", "text/css"},
		{"/n/site/a-b.txt", "dash", "text/plain; charset=utf-8"},
		{"/n/site/sp%20ace/%C3%BC.txt", "unicode", "text/plain"},
		{"/n/site/empty.bin", "", "application/octet-stream"},
	} {
		w := e.do(http.MethodGet, c.target)
		if w.Code != http.StatusOK || w.Body.String() != c.body {
			t.Fatalf("%s: %d %q", c.target, w.Code, w.Body)
		}
		h := w.Header()
		if h.Get("Content-Type") != c.ctype || h.Get("ETag") != etag(c.body) || h.Get("Cache-Control") != "public, max-age=7" {
			t.Fatalf("%s: headers %v", c.target, h)
		}
	}
	if e.obj.count("head") != 1 || e.obj.count("readall") != 1 || e.res.count("site") != 1 {
		t.Fatalf("manifest or name not cached: %v, resolves %d", e.obj.calls, e.res.count("site"))
	}
}

func TestHeadEntry(t *testing.T) {
	e := newEnv(t, Options{})
	e.publish("site", siteFiles)
	w := e.do(http.MethodHead, "/n/site/css/site.css")
	if w.Code != http.StatusOK || w.Body.Len() != 0 || w.Header().Get("Content-Length") != "6" {
		t.Fatalf("HEAD: %d %q %v", w.Code, w.Body, w.Header())
	}
}

func TestRedirects(t *testing.T) {
	e := newEnv(t, Options{})
	e.publish("site", siteFiles)
	e.publish("site@3", siteFiles)
	for _, c := range []struct{ target, loc string }{
		{"/n/site", "/n/site/"},
		{"/n/site?a=1&b=%20", "/n/site/?a=1&b=%20"},
		{"/n/site/docs", "/n/site/docs/"},
		{"/n/site/img?x=y", "/n/site/img/?x=y"},
		{"/n/site/img/icons", "/n/site/img/icons/"},
		{"/n/site/sp%20ace", "/n/site/sp%20ace/"},
		{"/n/site@3", "/n/site@3/"},
		{"/n/site@3/docs", "/n/site@3/docs/"},
	} {
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			w := e.do(m, c.target)
			if w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != c.loc {
				t.Fatalf("%s %s: %d Location %q, want %q", m, c.target, w.Code, w.Header().Get("Location"), c.loc)
			}
			if w.Header().Get("Cache-Control") != DefaultCacheControl {
				t.Fatalf("%s: Cache-Control %q", c.target, w.Header().Get("Cache-Control"))
			}
		}
	}
}

func TestNotFound(t *testing.T) {
	e := newEnv(t, Options{})
	e.publish("site", siteFiles)
	for _, target := range []string{
		"/n/site/nope", "/n/site/nope/", "/n/site/index.html/", "/n/site/css/site.css/x",
		"/n/site/im", "/n/site/img/a", "/n/site/IMG/", "/n/unknown", "/n/unknown/x", "/n/site@9/",
	} {
		wantError(t, e.do(http.MethodGet, target), http.StatusNotFound, httpx.CodeNotFound, "")
	}
	// The target itself is gone from storage.
	e.res.set("gone", idOf("never stored"))
	wantError(t, e.do(http.MethodGet, "/n/gone/"), http.StatusNotFound, httpx.CodeNotFound, "")
}

func TestResolverErrorsPassThrough(t *testing.T) {
	e := newEnv(t, Options{})
	e.res.fail("busy", httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable, "index down"))
	e.res.fail("slow", httpx.NewError(http.StatusGatewayTimeout, httpx.CodeTimeout, "budget spent"))
	wantError(t, e.do(http.MethodGet, "/n/busy/"), http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable, "")
	wantError(t, e.do(http.MethodGet, "/n/slow/"), http.StatusGatewayTimeout, httpx.CodeTimeout, "")
}

func TestLocal304WithoutFetching(t *testing.T) {
	e := newEnv(t, Options{})
	e.publish("site", siteFiles)
	if w := e.do(http.MethodGet, "/n/site/css/site.css"); w.Code != http.StatusOK {
		t.Fatalf("warm-up: %d", w.Code)
	}
	before := e.obj.total()
	for _, inm := range []string{etag("body{}"), "W/" + etag("body{}"), `"x", ` + etag("body{}") + `, "y"`} {
		w := e.do(http.MethodGet, "/n/site/css/site.css", "If-None-Match", inm)
		if w.Code != http.StatusNotModified || w.Header().Get("ETag") != etag("body{}") ||
			w.Header().Get("Cache-Control") != DefaultCacheControl || w.Body.Len() != 0 {
			t.Fatalf("If-None-Match %s: %d %v", inm, w.Code, w.Header())
		}
	}
	if got := e.obj.total(); got != before {
		t.Fatalf("304s made %d Objects calls", got-before)
	}
	// "*" and non-matching tags go to Objects.Serve.
	if w := e.do(http.MethodGet, "/n/site/css/site.css", "If-None-Match", "*"); w.Code != http.StatusNotModified {
		t.Fatalf("*: %d", w.Code)
	}
	if w := e.do(http.MethodGet, "/n/site/css/site.css", "If-None-Match", `"other"`); w.Code != http.StatusOK {
		t.Fatalf("other tag: %d", w.Code)
	}
	if got := e.obj.count("serve"); got != 3 {
		t.Fatalf("serve calls %d, want 3", got)
	}
	// A failing If-Match wins over If-None-Match: 412 from Objects.Serve.
	w := e.do(http.MethodGet, "/n/site/css/site.css", "If-Match", `"nope"`, "If-None-Match", etag("body{}"))
	wantError(t, w, http.StatusPreconditionFailed, httpx.CodePreconditionFailed, "")
}

func TestRangeOnEntry(t *testing.T) {
	e := newEnv(t, Options{})
	e.publish("site", siteFiles)
	w := e.do(http.MethodGet, "/n/site/index.html", "Range", "bytes=1-3")
	h := w.Header()
	if w.Code != http.StatusPartialContent || w.Body.String() != "h1>" || h.Get("Content-Range") != "bytes 1-3/13" ||
		h.Get("Content-Type") != "text/html; charset=utf-8" || h.Get("ETag") != etag("<h1>home</h1>") {
		t.Fatalf("range: %d %q %v", w.Code, w.Body, h)
	}
	w = e.do(http.MethodGet, "/n/site/index.html", "Range", "bytes=99-")
	wantError(t, w, http.StatusRequestedRangeNotSatisfiable, httpx.CodeRangeNotSatisfiable, "")
	if v := e.met.Values()[`ron_gateway_site_size_mismatch_total{role="gateway"}`]; v != 0 {
		t.Fatalf("size mismatch counted on a correct entry: %v", v)
	}
}

func TestBlobTarget(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.obj.put([]byte("hello blob"), "text/plain")
	e.res.set("blob", id)
	for _, target := range []string{"/n/blob", "/n/blob/"} {
		w := e.do(http.MethodGet, target)
		h := w.Header()
		if w.Code != http.StatusOK || w.Body.String() != "hello blob" || h.Get("ETag") != etag("hello blob") ||
			h.Get("Cache-Control") != DefaultCacheControl || h.Get("Content-Type") != "text/plain" {
			t.Fatalf("%s: %d %q %v", target, w.Code, w.Body, h)
		}
	}
	wantError(t, e.do(http.MethodGet, "/n/blob/x"), http.StatusNotFound, httpx.CodeNotFound, "")
	wantError(t, e.do(http.MethodGet, "/n/blob/index.html"), http.StatusNotFound, httpx.CodeNotFound, "")
	wantError(t, e.do(http.MethodGet, "/n/blob/../x"), http.StatusBadRequest, httpx.CodeBadRequest, "")
	w := e.do(http.MethodGet, "/n/blob", "Range", "bytes=-4")
	if w.Code != http.StatusPartialContent || w.Body.String() != "blob" {
		t.Fatalf("range: %d %q", w.Code, w.Body)
	}
	serves := e.obj.count("serve")
	w = e.do(http.MethodGet, "/n/blob", "If-None-Match", etag("hello blob"))
	if w.Code != http.StatusNotModified || w.Header().Get("Cache-Control") != DefaultCacheControl {
		t.Fatalf("304: %d %v", w.Code, w.Header())
	}
	if e.obj.count("serve") != serves {
		t.Fatal("blob 304 fetched bytes")
	}
	// A Content-Type that does not parse is a blob, not a manifest.
	odd := e.obj.put([]byte(`{"version":1,"entries":{}}`), "application/vnd.ron.manifest+json; =")
	e.res.set("odd", odd)
	if w := e.do(http.MethodGet, "/n/odd"); w.Code != http.StatusOK {
		t.Fatalf("odd type: %d", w.Code)
	}
}

func TestVersionPinned(t *testing.T) {
	e := newEnv(t, Options{})
	e.publish("site", []file{{"index.html", "v-latest", "text/html"}})
	e.publish("site@1", []file{{"index.html", "v-one", "text/html"}})
	if w := e.do(http.MethodGet, "/n/site@1/"); w.Body.String() != "v-one" {
		t.Fatalf("site@1: %d %q", w.Code, w.Body)
	}
	if w := e.do(http.MethodGet, "/n/site/"); w.Body.String() != "v-latest" {
		t.Fatalf("site: %d %q", w.Code, w.Body)
	}
	if e.res.count("site@1") != 1 || e.res.count("site") != 1 {
		t.Fatal("keys not resolved separately")
	}
}

func TestSizeMismatchCounted(t *testing.T) {
	e := newEnv(t, Options{})
	real := e.obj.put([]byte("twelve bytes"), "text/plain")
	raw := `{"version":1,"entries":{"f.txt":{"id":"` + real.String() + `","size":3},"g.txt":{"id":"` + real.String() + `","size":12}}}`
	e.publishRaw("site", raw)
	key := `ron_gateway_site_size_mismatch_total{role="gateway"}`
	if w := e.do(http.MethodGet, "/n/site/f.txt"); w.Body.String() != "twelve bytes" {
		t.Fatalf("served %q: the id's bytes must win", w.Body)
	}
	e.do(http.MethodGet, "/n/site/f.txt", "Range", "bytes=0-0")
	e.do(http.MethodGet, "/n/site/g.txt")
	e.do(http.MethodHead, "/n/site/g.txt")
	if v := e.met.Values()[key]; v != 2 {
		t.Fatalf("size mismatches %v, want 2 (200 and 206 of f.txt)", v)
	}
}

func TestNestedManifestServedAsBytes(t *testing.T) {
	e := newEnv(t, Options{})
	inner := `{"version":1,"entries":{}}`
	innerID := e.obj.put([]byte(inner), manifest.MediaType)
	e.publishRaw("site", `{"version":1,"entries":{"sub.json":{"id":"`+innerID.String()+`","size":26,"type":"`+manifest.MediaType+`"}}}`)
	w := e.do(http.MethodGet, "/n/site/sub.json")
	if w.Code != http.StatusOK || w.Body.String() != inner || w.Header().Get("Content-Type") != manifest.MediaType {
		t.Fatalf("nested: %d %q %v", w.Code, w.Body, w.Header())
	}
}

func TestSetOptionsLive(t *testing.T) {
	e := newEnv(t, Options{})
	e.publish("site", siteFiles)
	e.s.SetOptions(Options{CacheControl: "no-store"})
	if w := e.do(http.MethodGet, "/n/site/"); w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("Cache-Control %q", w.Header().Get("Cache-Control"))
	}
	e.s.SetOptions(Options{ManifestCacheBytes: 1})
	if n, _ := e.s.manifests.Stats(); n != 0 {
		t.Fatalf("%d manifests kept after shrinking the cache", n)
	}
	e.do(http.MethodGet, "/n/site/")
	if e.obj.count("readall") != 2 {
		t.Fatalf("manifest reads %d, want 2", e.obj.count("readall"))
	}
}
