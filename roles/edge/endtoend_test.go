package edge

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ronhq/ron/store"
)

// TestEachRoute sends one request of each docs/edge.md §1 route through the role's
// Handler: packs, raw archive, tile, TileJSON, /o from the in-process
// storage, /assets from a loopback origin, a CORS preflight.
func TestEachRoute(t *testing.T) {
	dir := packsDir(t, "pmtiles/stamen_toner_z3.pmtiles")
	object := []byte("an immutable object")
	st := newFakeStorage(object)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=60")
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("asset at " + r.URL.Path))
	}))
	defer origin.Close()
	h := startRole(t, func(c *Config, o *Options) {
		c.PacksDir = dir
		c.Origins = []OriginConfig{{Name: "site", URL: origin.URL + "/base", AllowInsecure: true}}
		o.Local.Storage = st.handler
	})
	id := store.Sum(object)
	rows := []struct {
		name, method, path string
		hdr                []string
		code               int
		ctype, body, want  string // want: a header line "Name: value" that must be present
	}{
		{"pack list", "GET", "/packs", nil, 200, "application/json", `"stamen_toner_z3"`, ""},
		{"raw archive range", "GET", "/packs/stamen_toner_z3.pmtiles", []string{"Range", "bytes=0-6"}, 206, "application/vnd.pmtiles", "PMTiles", "Accept-Ranges: bytes"},
		{"tile", "GET", "/tiles/stamen_toner_z3/0/0/0.png", nil, 200, "image/png", "\x89PNG", "Cache-Control: public, max-age=60"},
		{"tilejson", "GET", "/tiles/stamen_toner_z3.json", nil, 200, "application/json", `"tilejson":"3.0.0"`, ""},
		{"object", "GET", "/o/" + id.String(), nil, 200, "", string(object), `ETag: "` + id.String() + `"`},
		{"object head", "HEAD", "/o/" + id.String(), nil, 200, "", "", ""},
		{"bad object id", "GET", "/o/b3:xyz", nil, 400, "application/json", `"bad_request"`, ""},
		{"asset", "GET", "/assets/site/a/b.txt", nil, 200, "text/plain", "asset at /base/a/b.txt", ""},
		{"unknown origin", "GET", "/assets/nope/x", nil, 404, "application/json", `"not_found"`, ""},
		{"preflight", "OPTIONS", "/tiles/stamen_toner_z3/0/0/0.png", []string{"Origin", "https://app.example"}, 204, "", "", "Access-Control-Allow-Origin: *"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			resp, body := h.get(t, row.method, row.path, row.hdr...)
			if resp.StatusCode != row.code || !strings.HasPrefix(resp.Header.Get("Content-Type"), row.ctype) ||
				!strings.Contains(body, row.body) {
				t.Fatalf("%s %s = %d %q %q", row.method, row.path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("no nosniff")
			}
			if name, value, ok := strings.Cut(row.want, ": "); ok && resp.Header.Get(name) != value {
				t.Errorf("%s = %q, want %q", name, resp.Header.Get(name), value)
			}
		})
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if n := len(st.claims); n == 0 || st.claims[0] == nil || st.claims[0].ID != LinkPrincipalID {
		t.Fatalf("in-process fills carried no link principal: %v", st.claims)
	}
}
