package e2e

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestGatewaySiteOneProcess publishes a site on a node running every role
// and reads it through the node's gateway (docs/gateway.md §5).
func TestGatewaySiteOneProcess(t *testing.T) {
	t.Parallel()
	checkSite(t, startOneProcess(t, gwTestConfig))
}

// TestGatewaySiteThreeProcesses publishes the same site on a storage node
// and names it on an index node, then reads it through a gateway process
// forwarding to both over HTTP. An object held only by a second storage
// node is served through the gateway from the index's provider (docs/gateway.md §4).
func TestGatewaySiteThreeProcesses(t *testing.T) {
	t.Parallel()
	w := startThreeProcesses(t, gwTestConfig)
	checkSite(t, w)
	checkProviderRead(t, w)
}

// siteFiles is the published tree; img/logo.bin spans three 64 KiB chunks.
func siteFiles() map[string][]byte {
	return map[string][]byte{
		"index.html":       []byte("<!doctype html>\n<h1>home</h1>\n"),
		"about/index.html": []byte("<!doctype html>\n<h1>about</h1>\n"),
		"css/site.css":     []byte("h1 { color: teal }\n"),
		"img/logo.bin":     randomBytes(81, 150_000),
	}
}

// siteRow is one request to the published site and what must come back.
type siteRow struct {
	name     string
	path     string
	header   http.Header
	status   int
	code     string // envelope code of an error answer
	body     []byte // nil = not checked
	ctype    string // media type without parameters, "" = not checked
	etag     string // "" = not checked
	location string // "" = not checked
	check    func(t *testing.T, a gwAnswer)
}

// checkSite writes the tree, stores it with `ron put -r` on w's storage,
// points the name "site" at its manifest on w's index and runs the site
// rows against w's gateway.
func checkSite(t *testing.T, w gwWiring) {
	t.Helper()
	files := siteFiles()
	put := ron(t, cliOpts{env: w.st.cliEnv()}, "put", "-r", writeTree(t, files))
	manifest := strings.TrimSpace(put.stdout)
	if put.code != 0 || !strings.HasPrefix(manifest, "b3:") {
		t.Fatalf("%s: ron put -r: exit %d, stdout %q, stderr %s", w.name, put.code, put.stdout, put.stderr)
	}
	if rec := w.ix.mustName("set", "site", manifest); rec.B3 != manifest {
		t.Fatalf("%s: name set site: %+v, want → %s", w.name, rec, manifest)
	}
	for _, r := range siteRows(files, manifest) {
		t.Run(w.name+"/"+r.name, func(t *testing.T) {
			r.run(t, w)
		})
	}
}

// siteRows are the rows of checkSite.
func siteRows(files map[string][]byte, manifest string) []siteRow {
	home, logo := idOf(files["index.html"]), files["img/logo.bin"]
	return []siteRow{
		{name: "name redirects to its root", path: "/n/site", status: http.StatusMovedPermanently, location: "/n/site/"},
		{name: "root serves index.html", path: "/n/site/", status: http.StatusOK, body: files["index.html"],
			ctype: "text/html", etag: `"` + home + `"`},
		{name: "directory redirects", path: "/n/site/about", status: http.StatusMovedPermanently, location: "/n/site/about/"},
		{name: "directory serves its index.html", path: "/n/site/about/", status: http.StatusOK,
			body: files["about/index.html"], ctype: "text/html", etag: `"` + idOf(files["about/index.html"]) + `"`},
		{name: "stylesheet", path: "/n/site/css/site.css", status: http.StatusOK, body: files["css/site.css"], ctype: "text/css"},
		{name: "whole multi-chunk entry", path: "/n/site/img/logo.bin", status: http.StatusOK, body: logo,
			etag: `"` + idOf(logo) + `"`},
		{name: "range inside the second chunk", path: "/n/site/img/logo.bin", header: hdr("Range", "bytes=70000-70099"),
			status: http.StatusPartialContent, body: logo[70000:70100], check: gwHeaderIs("Content-Range", "bytes 70000-70099/150000")},
		{name: "If-None-Match on the root", path: "/n/site/", header: hdr("If-None-Match", `"`+home+`"`),
			status: http.StatusNotModified, body: []byte{}, etag: `"` + home + `"`},
		{name: "If-None-Match on an entry", path: "/n/site/img/logo.bin", header: hdr("If-None-Match", `W/"`+idOf(logo)+`"`),
			status: http.StatusNotModified, body: []byte{}},
		{name: "directory without index.html lists", path: "/n/site/img/", status: http.StatusOK, ctype: "application/json",
			check: wantListing(manifest, "img/", listed{Name: "logo.bin", ID: idOf(logo), Size: int64(len(logo))})},
		{name: "missing path", path: "/n/site/nope", status: http.StatusNotFound, code: "not_found"},
	}
}

// run sends the row's request to w's gateway and checks the answer.
func (r siteRow) run(t *testing.T, w gwWiring) {
	t.Helper()
	a := w.mustGet(t, r.path, r.header)
	if a.status != r.status {
		t.Fatalf("GET %s: %s, want %d", r.path, a.describe(), r.status)
	}
	if r.code != "" {
		wantError(t, "GET "+r.path, a.httpResult, r.status, r.code)
	}
	if r.body != nil && !bytes.Equal(a.body, r.body) {
		t.Errorf("GET %s: %d body bytes differ from the %d expected", r.path, len(a.body), len(r.body))
	}
	if r.ctype != "" {
		if mt, _, err := mime.ParseMediaType(a.header.Get("Content-Type")); err != nil || mt != r.ctype {
			t.Errorf("GET %s: Content-Type %q, want %s", r.path, a.header.Get("Content-Type"), r.ctype)
		}
	}
	if r.etag != "" && a.header.Get("ETag") != r.etag {
		t.Errorf("GET %s: ETag %q, want %s", r.path, a.header.Get("ETag"), r.etag)
	}
	if r.location != "" && a.header.Get("Location") != r.location {
		t.Errorf("GET %s: Location %q, want %s", r.path, a.header.Get("Location"), r.location)
	}
	if r.check != nil {
		r.check(t, a)
	}
}

// gwHeaderIs checks one response header.
func gwHeaderIs(key, want string) func(*testing.T, gwAnswer) {
	return func(t *testing.T, a gwAnswer) {
		t.Helper()
		if got := a.header.Get(key); got != want {
			t.Errorf("%s %q, want %q", key, got, want)
		}
	}
}

// listed is one entry of a site listing (docs/gateway.md §5).
type listed struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	Size int64  `json:"size"`
	Type string `json:"type"`
	Dir  bool   `json:"dir"`
}

// wantListing checks a listing answer: name "site", the manifest, the
// directory and exactly the entries given (their types are not compared).
func wantListing(manifest, dir string, want ...listed) func(*testing.T, gwAnswer) {
	return func(t *testing.T, a gwAnswer) {
		t.Helper()
		var l struct {
			Name     string   `json:"name"`
			Manifest string   `json:"manifest"`
			Path     string   `json:"path"`
			Entries  []listed `json:"entries"`
		}
		if err := json.Unmarshal(a.body, &l); err != nil {
			t.Fatalf("listing %s: %v", a.body, err)
		}
		if l.Name != "site" || l.Manifest != manifest || l.Path != dir || len(l.Entries) != len(want) {
			t.Fatalf("listing %s, want site, %s, %s and %d entries", a.body, manifest, dir, len(want))
		}
		for i, e := range l.Entries {
			e.Type = ""
			if e != want[i] {
				t.Errorf("listing entry %d: %+v, want %+v", i, e, want[i])
			}
		}
		if etag := a.header.Get("ETag"); !strings.HasPrefix(etag, `"ls-`) || len(etag) != len(`"ls-`)+32+1 {
			t.Errorf("listing ETag %q, want \"ls-<32 hex>\"", etag)
		}
	}
}

// checkProviderRead stores an object on a second storage node announcing
// to w's index; w's own storage answers 404 for it, and the gateway serves
// it (whole and a range) from the index's provider, verified.
func checkProviderRead(t *testing.T, w gwWiring) {
	t.Helper()
	st2 := startStorageFor(t, w.ix)
	data := randomBytes(82, 200_000)
	id := st2.post(st2.token("storage:write"), data).CID
	waitProviderAt(t, w.ix, id, st2)
	if r := do(t, http.MethodGet, w.st.url("/o/"+id), nil, nil); r.status != http.StatusNotFound {
		t.Fatalf("the gateway's storage answers %d for %s, want 404 (the read must go to the provider)", r.status, id)
	}
	whole := w.mustGet(t, "/o/"+id, nil)
	if whole.status != http.StatusOK || !bytes.Equal(whole.body, data) {
		t.Fatalf("GET /o/%s via the provider: %d, %d bytes (equal %t), want 200 and the %d stored", id, whole.status,
			len(whole.body), bytes.Equal(whole.body, data), len(data))
	}
	if whole.header.Get("ETag") != `"`+id+`"` || whole.header.Get("Content-Length") != strconv.Itoa(len(data)) {
		t.Errorf("GET /o/%s via the provider: ETag %q, Content-Length %q", id, whole.header.Get("ETag"), whole.header.Get("Content-Length"))
	}
	part := w.mustGet(t, "/o/"+id, hdr("Range", "bytes=131000-131099"))
	if part.status != http.StatusPartialContent || !bytes.Equal(part.body, data[131000:131100]) {
		t.Fatalf("ranged GET via the provider: %s, want 206 and bytes 131000-131099", part.describe())
	}
	if len(w.gw.metricSeries("ron_gateway_upstream_requests_total", `upstream="provider"`)) == 0 {
		t.Errorf("the gateway counted no provider request")
	}
}
