package gateway

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/ronhq/ron/store"
)

// providerFixture is a gateway whose storage has nothing (404) and whose
// index lists providers per object.
type providerFixture struct {
	*harness
	storage, index *stub
	storageURL     string
}

// startProviders serves each object's provider list from providers (built
// once the storage URL is known, so a list may name it).
func startProviders(t *testing.T, providers func(storageURL string) map[store.ID][]string) providerFixture {
	storage := newStub(serveObjects(false))
	storageURL := storage.listen(t)
	index := newStub(serveIndex(providers(storageURL), nil))
	cfg := baseConfig()
	cfg.StorageURL, cfg.IndexURL = storageURL, index.listen(t)
	return providerFixture{startGateway(t, cfg, Locals{}), storage, index, storageURL}
}

// newProvider is one provider stub over HTTP: honest, or corrupt (true lists,
// wrong bytes).
func newProvider(t *testing.T, corrupt bool, objs ...object) (*stub, string) {
	s := newStub(serveObjects(corrupt, objs...))
	return s, s.listen(t)
}

// blob returns n deterministic bytes that differ per seed.
func blob(seed byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

// TestObjectFallbacks (docs/gateway.md §4): reads storage misses from the index's
// providers, verified: the right bytes from the first provider that serves
// them, 502 when none does, 404 when the index knows none, the storage URL
// never asked twice, HEAD answered from a provider.
func TestObjectFallbacks(t *testing.T) {
	one := object{data: blob(1, 5000), ctype: "text/plain"}
	two := object{data: blob(2, 7000), ctype: "application/octet-stream"}
	large := object{data: blob(7, 3*store.ChunkSize+17), ctype: "application/octet-stream"}
	three := object{data: blob(3, 9000), ctype: "text/plain"}
	four := object{data: blob(4, 10), ctype: "text/plain"}
	unknown := object{data: blob(5, 10)}
	good, goodURL := newProvider(t, false, one, two, four, large)
	_, badURL := newProvider(t, true, one, two, three)
	_, badLargeURL := newProvider(t, true, large) // not marked bad by the table's rows
	_, bad2URL := newProvider(t, true, three)
	f := startProviders(t, func(storageURL string) map[store.ID][]string {
		return map[store.ID][]string{
			store.Sum(one.data):   {goodURL},
			store.Sum(two.data):   {badURL, goodURL},
			store.Sum(three.data): {badURL, bad2URL},
			store.Sum(four.data):  {storageURL, goodURL},
			store.Sum(large.data): {badLargeURL, goodURL},
		}
	})
	rows := []struct {
		name   string
		method string
		obj    object
		status int
		code   string
		body   []byte
	}{
		{"storage 404, provider serves", "GET", one, 200, "", one.data},
		{"bad then good provider", "GET", two, 200, "", two.data},
		{"every provider bad", "GET", three, 502, "upstream_unavailable", nil},
		{"index knows no provider", "GET", unknown, 404, "not_found", nil},
		{"storage URL skipped among providers", "GET", four, 200, "", four.data},
		{"HEAD via provider", "HEAD", one, 200, "", nil},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			id := store.Sum(row.obj.data)
			before := f.storage.count()
			a := f.with(t).do(row.method, "/o/"+id.String(), nil)
			want(t, row.name, a, row.status, row.code)
			if row.status == 200 && !bytes.Equal(a.body, row.body) {
				t.Errorf("body: %d bytes, want the object's %d", len(a.body), len(row.body))
			}
			if row.status == 200 && (a.header.Get("ETag") != `"`+id.String()+`"` ||
				a.header.Get("Content-Length") != strconv.Itoa(len(row.obj.data))) {
				t.Errorf("ETag %q Content-Length %q, want the object's", a.header.Get("ETag"), a.header.Get("Content-Length"))
			}
			if n := f.storage.count() - before; n != 1 {
				t.Errorf("storage asked %d times, want once (never again as a provider)", n)
			}
		})
	}
	checkLargeCorrupt(t, f.harness, large.data)
	for _, r := range good.requests() {
		for _, k := range []string{"X-Ron-Tenant", "Authorization", "X-Forwarded-For", "X-Forwarded-Host",
			"X-Forwarded-Proto", "Cookie", "Request-Timeout"} {
			if v := r.header.Values(k); len(v) != 0 {
				t.Errorf("provider request %s %s carries %s %q", r.method, r.path, k, v)
			}
		}
	}
}

// checkLargeCorrupt reads a multi-group object whose first provider serves
// a wrong group (the middle byte's): that read is aborted after the headers (the client
// never sees a complete wrong body), the provider is marked bad, and the
// next read is served by the good provider.
func checkLargeCorrupt(t *testing.T, h *harness, data []byte) {
	t.Helper()
	path := "/o/" + store.Sum(data).String()
	a := h.send(h.req("GET", path, nil))
	if a.err == nil {
		t.Errorf("GET of a large object from a corrupt provider: %s, want an aborted body", a)
	}
	if len(a.body) >= len(data) {
		t.Errorf("aborted read delivered %d of %d bytes", len(a.body), len(data))
	}
	if got := h.metric("gateway_hash_mismatch_total"); got < 1 {
		t.Errorf("ron_gateway_hash_mismatch_total = %v, want ≥ 1", got)
	}
	a = h.do("GET", path, nil)
	if a.status != http.StatusOK || !bytes.Equal(a.body, data) {
		t.Errorf("GET after the corrupt provider was marked bad: %s, want the object", a)
	}
}

// TestProviderRequestsUntrusted (docs/gateway.md §2): a client's token, cookies and
// forwarded headers never reach a provider; neither do the link headers.
func TestProviderRequestsUntrusted(t *testing.T) {
	obj := object{data: blob(6, 2000), ctype: "text/plain"}
	p, url := newProvider(t, false, obj)
	f := startProviders(t, func(string) map[store.ID][]string {
		return map[store.ID][]string{store.Sum(obj.data): {url}}
	})
	a := f.do("GET", "/o/"+store.Sum(obj.data).String(), nil, "Authorization", f.bearer("acme", "storage:read"),
		"Cookie", "s=1", "X-Forwarded-For", "198.51.100.1", "X-Ron-Tenant", "acme")
	if a.status != http.StatusOK || !bytes.Equal(a.body, obj.data) {
		t.Fatalf("GET via provider: %s", a)
	}
	if got := f.storage.requests()[0].header.Get("X-Ron-Tenant"); got != "acme" {
		t.Errorf("storage (a trusted link) got X-Ron-Tenant %q, want acme", got)
	}
	reqs := p.requests()
	if len(reqs) == 0 {
		t.Fatal("the provider was not asked")
	}
	for _, r := range reqs {
		for k := range r.header {
			switch k {
			case "User-Agent", "Accept-Encoding", "Range":
			default:
				t.Errorf("provider request %s %s carries %s: %q", r.method, r.path, k, r.header.Values(k))
			}
		}
	}
}

// TestLocalNotModified (docs/gateway.md §4 step 2): If-None-Match naming the object is a
// 304 from the gateway itself, with no upstream call.
func TestLocalNotModified(t *testing.T) {
	f := startProviders(t, func(string) map[store.ID][]string { return nil })
	id := store.Sum([]byte("cached"))
	for _, inm := range []string{`"` + id.String() + `"`, `W/"` + id.String() + `"`, `"b3:other", "` + id.String() + `"`} {
		a := f.do("GET", "/o/"+id.String(), nil, "If-None-Match", inm)
		if a.status != http.StatusNotModified || a.header.Get("ETag") != fmt.Sprintf("%q", id.String()) {
			t.Errorf("If-None-Match %s: %s ETag %q, want 304 and the id's ETag", inm, a, a.header.Get("ETag"))
		}
	}
	if n := f.storage.count() + f.index.count(); n != 0 {
		t.Errorf("upstreams received %d requests, want none", n)
	}
}
