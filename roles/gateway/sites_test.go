package gateway

import (
	"net/http"
	"testing"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/manifest"
)

// TestSiteEntryRangeAndLocal304 (docs/gateway.md §5, docs/gateway.md §12 sites): an entry of a named site
// answers Range requests with its own type and ETag, and a matching
// If-None-Match is a 304 before any of the entry's bytes are fetched.
func TestSiteEntryRangeAndLocal304(t *testing.T) {
	entry := []byte("hello, site entry")
	eid := store.Sum(entry)
	mb, err := manifest.Encode(manifest.ManifestV1{Entries: map[string]manifest.Entry{
		"docs/a.txt": {ID: eid, Size: int64(len(entry)), Type: "text/plain"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	storage := newStub(serveObjects(false, object{data: mb, ctype: manifest.MediaType},
		object{data: entry, ctype: "application/octet-stream"}))
	index := newStub(serveIndex(nil, map[string]store.ID{"site": store.Sum(mb)}))
	cfg := baseConfig()
	cfg.StorageURL, cfg.IndexURL = storage.listen(t), index.listen(t)
	h := startGateway(t, cfg, Locals{})

	a := h.do("GET", "/n/site/docs/a.txt", nil, "Range", "bytes=0-4")
	if a.status != http.StatusPartialContent || string(a.body) != "hello" {
		t.Fatalf("Range on an entry: %s, want 206 hello", a)
	}
	for k, v := range map[string]string{"Content-Type": "text/plain", "ETag": `"` + eid.String() + `"`,
		"Content-Range": "bytes 0-4/17", "Cache-Control": cfg.NamesCacheControl} {
		if got := a.header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}

	entryReads := func() int {
		n := 0
		for _, r := range storage.requests() {
			if r.method == "GET" && r.path == "/o/"+eid.String() {
				n++
			}
		}
		return n
	}
	before := entryReads()
	a = h.do("GET", "/n/site/docs/a.txt", nil, "If-None-Match", `"`+eid.String()+`"`)
	if a.status != http.StatusNotModified || a.header.Get("ETag") != `"`+eid.String()+`"` {
		t.Fatalf("If-None-Match on an entry: %s ETag %q, want 304", a, a.header.Get("ETag"))
	}
	if n := entryReads() - before; n != 0 {
		t.Errorf("storage served the entry's bytes %d times for a 304", n)
	}
}
