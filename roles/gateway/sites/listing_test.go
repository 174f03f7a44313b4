package sites

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/store"
)

func TestListingJSON(t *testing.T) {
	e := newEnv(t, Options{})
	mid := e.publish("site", siteFiles)
	png := func(b string) string { return idOf(b).String() }
	want := `{"name":"site","manifest":"` + mid.String() + `","path":"img/","entries":[` +
		`{"name":"a.png","id":"` + png("PNGA") + `","size":4,"type":"image/png"},` +
		`{"name":"b.png","id":"` + png("PNGBB") + `","size":5,"type":"image/png"},` +
		`{"name":"icons/","dir":true}]}` + "\n"
	w := e.do(http.MethodGet, "/n/site/img/")
	h := w.Header()
	if w.Code != http.StatusOK || w.Body.String() != want {
		t.Fatalf("listing: %d\n got %s\nwant %s", w.Code, w.Body, want)
	}
	if h.Get("Content-Type") != "application/json" || h.Get("ETag") != ListingETag(mid, "img/") ||
		h.Get("Cache-Control") != DefaultCacheControl || h.Get("Content-Length") != strconv.Itoa(len(want)) {
		t.Fatalf("headers %v", h)
	}
	// HEAD: same headers, no body.
	w = e.do(http.MethodHead, "/n/site/img/")
	if w.Code != http.StatusOK || w.Body.Len() != 0 || w.Header().Get("Content-Length") != strconv.Itoa(len(want)) {
		t.Fatalf("HEAD listing: %d %v", w.Code, w.Header())
	}
}

func TestListingZeroSizeAndVersion(t *testing.T) {
	e := newEnv(t, Options{})
	mid := e.publish("site@2", []file{{"d/z.bin", "", "application/octet-stream"}})
	want := `{"name":"site","manifest":"` + mid.String() + `","path":"d/","entries":[` +
		`{"name":"z.bin","id":"` + idOf("").String() + `","size":0,"type":"application/octet-stream"}]}` + "\n"
	if w := e.do(http.MethodGet, "/n/site@2/d/"); w.Body.String() != want {
		t.Fatalf("got %s\nwant %s", w.Body, want)
	}
}

func TestListingRootWithoutIndexAndEmptyManifest(t *testing.T) {
	e := newEnv(t, Options{})
	mid := e.publishRaw("empty", `{"version":1,"entries":{}}`)
	want := `{"name":"empty","manifest":"` + mid.String() + `","path":"","entries":[]}` + "\n"
	if w := e.do(http.MethodGet, "/n/empty/"); w.Code != http.StatusOK || w.Body.String() != want {
		t.Fatalf("empty root: %d %s", w.Code, w.Body)
	}
	e.publish("noindex", []file{{"b", "1", ""}, {"a-z/x", "2", ""}, {"a/y", "3", ""}, {"a.b", "4", ""}, {"a0", "5", ""}})
	w := e.do(http.MethodGet, "/n/noindex/")
	var names []string
	for _, le := range decodeListing(t, w.Body.Bytes()).Entries {
		names = append(names, le.Name)
	}
	if got := joinNames(names); got != "a-z/,a.b,a/,a0,b" {
		t.Fatalf("order %s", got)
	}
}

func TestListingConditionals(t *testing.T) {
	e := newEnv(t, Options{})
	mid := e.publish("site", siteFiles)
	tag := ListingETag(mid, "img/")
	e.do(http.MethodGet, "/n/site/img/")
	before := e.obj.total()
	for _, inm := range []string{tag, "W/" + tag, `"a", ` + tag, "*"} {
		w := e.do(http.MethodGet, "/n/site/img/", "If-None-Match", inm)
		if w.Code != http.StatusNotModified || w.Header().Get("ETag") != tag || w.Body.Len() != 0 {
			t.Fatalf("If-None-Match %s: %d", inm, w.Code)
		}
	}
	if e.obj.total() != before {
		t.Fatal("listing 304 made Objects calls")
	}
	wantError(t, e.do(http.MethodGet, "/n/site/img/", "If-Match", `"nope"`), http.StatusPreconditionFailed,
		httpx.CodePreconditionFailed, "")
	if w := e.do(http.MethodGet, "/n/site/img/", "If-Match", tag); w.Code != http.StatusOK {
		t.Fatalf("If-Match own tag: %d", w.Code)
	}
}

func TestListingETagVector(t *testing.T) {
	id, _ := store.ParseID("b3:" + "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")
	buf := append([]byte(id.String()), 0)
	buf = append(buf, "img/"...)
	want := `"ls-` + store.Sum(buf).Hex()[:32] + `"`
	if got := ListingETag(id, "img/"); got != want || len(got) != 37 {
		t.Fatalf("ListingETag = %s, want %s", got, want)
	}
	if ListingETag(id, "") == ListingETag(id, "img/") {
		t.Fatal("directories share a tag")
	}
}
