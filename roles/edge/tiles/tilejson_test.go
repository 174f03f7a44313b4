package tiles

import (
	"bytes"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/zeebo/blake3"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles/pmtilestest"
)

// keys returns the top-level keys of a JSON object in document order.
func keys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %q", b)
	}
	var out []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TileJSON per docs/edge.md §6.4 for each kind of fixture: values, field order,
// vector_layers rules, ETag "tj-<32 hex of BLAKE3(body)>", Vary.
func TestTileJSONFixtures(t *testing.T) {
	ev := newEnv(t, Settings{}, fixtures(t, "stamen_toner_z3.pmtiles", "test_fixture_1.pmtiles",
		"world_cities.mbtiles", "json.mbtiles", "test_fixture_mlt.pmtiles"))
	for _, c := range []struct {
		name string
		want string
	}{
		{"stamen_toner_z3", `{"tilejson":"3.0.0","name":"stamen_toner_z3","scheme":"xyz",` +
			`"tiles":["http://example.com/tiles/stamen_toner_z3/{z}/{x}/{y}.png"],"minzoom":0,"maxzoom":3,` +
			`"bounds":[-180,-85,180,85],"center":[0,0,0]}`},
		{"test_fixture_1", `{"tilejson":"3.0.0","name":"test_fixture_1.pmtiles","description":"test_fixture_1.pmtiles",` +
			`"version":"2","scheme":"xyz","tiles":["http://example.com/tiles/test_fixture_1/{z}/{x}/{y}.mvt"],` +
			`"minzoom":0,"maxzoom":0,"bounds":[0,0,0.9999999,1],"center":[0,0,0],` +
			`"vector_layers":[{"id":"test_fixture_1pmtiles","description":"","minzoom":0,"maxzoom":0,"fields":{}}]}`},
		{"world_cities", `{"tilejson":"3.0.0","name":"Major cities from Natural Earth data",` +
			`"description":"Major cities from Natural Earth data","version":"2","scheme":"xyz",` +
			`"tiles":["http://example.com/tiles/world_cities/{z}/{x}/{y}.mvt"],"minzoom":0,"maxzoom":6,` +
			`"bounds":[-123.12359,-37.818085,174.763027,59.352706],"center":[-75.9375,38.788894,6],` +
			`"vector_layers":[{"id":"cities","description":"","minzoom":0,"maxzoom":6,"fields":{"name":"String"}}]}`},
		{"json", `{"tilejson":"3.0.0","name":"Dummy json data","version":"2","scheme":"xyz",` +
			`"tiles":["http://example.com/tiles/json/{z}/{x}/{y}.json"],"minzoom":0,"maxzoom":0,` +
			`"bounds":[-123.12359,-37.818085,174.763027,59.352706],"center":[-75.9375,38.788894,0]}`},
	} {
		w := ev.get("/tiles/" + c.name + ".json")
		body := w.Body.Bytes()
		if w.Code != 200 || string(body) != c.want+"\n" {
			t.Errorf("%s: %d\n got %s\nwant %s", c.name, w.Code, body, c.want)
			continue
		}
		sum := blake3.Sum256(body)
		h := w.Header()
		if h.Get("ETag") != `"tj-`+hex.EncodeToString(sum[:16])+`"` || h.Get("Content-Type") != "application/json" ||
			h.Get("Vary") != varyForwarded || h.Get("Cache-Control") != DefaultCacheControl || h.Get("Last-Modified") == "" {
			t.Errorf("%s: headers %v", c.name, h)
		}
		if w := ev.get("/tiles/"+c.name+".json", "If-None-Match", h.Get("ETag")); w.Code != 304 {
			t.Errorf("%s: revalidation %d", c.name, w.Code)
		}
	}
	// HTML in attribution is not escaped.
	if mlt := ev.get("/tiles/test_fixture_mlt.json").Body.Bytes(); !bytes.Contains(mlt, []byte(`"attribution":"<a href=`)) {
		t.Errorf("attribution escaped: %s", mlt)
	}
}

// Field order as the spec writes it, with every optional field present.
func TestTileJSONFieldOrder(t *testing.T) {
	meta := `{"vector_layers":[{"id":"a"}],"attribution":"A & B","version":"1.0","description":"D","name":"N","x":1}`
	ev := newEnv(t, Settings{}, func(dir string) { writeFile(t, dir, "v.pmtiles", buildMVT(t, meta)) })
	body := ev.get("/tiles/v.json").Body.Bytes()
	want := "tilejson,name,description,version,attribution,scheme,tiles,minzoom,maxzoom,bounds,center,vector_layers"
	if got := strings.Join(keys(t, body), ","); got != want {
		t.Errorf("order %s", got)
	}
	if !bytes.Contains(body, []byte(`"attribution":"A & B"`)) || !bytes.Contains(body, []byte(`"vector_layers":[{"id":"a"}]`)) {
		t.Errorf("%s", body)
	}
}

// buildMVT is a gzip MVT PMTiles archive with one tile at 0/0/0 and the
// given metadata.
func buildMVT(t testing.TB, meta string) []byte {
	t.Helper()
	a, err := pmtilestest.Build([]pmtilestest.Tile{{Data: []byte("mvt bytes")}}, pmtilestest.Options{
		TileType: pmtiles.TileType(1), TileCompression: pmtiles.CompressionGzip, CompressTiles: true, Metadata: []byte(meta)})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// vector_layers: "[]" for an MVT pack whose metadata has none; omitted
// for a raster pack.
func TestTileJSONVectorLayersDefault(t *testing.T) {
	ev := newEnv(t, Settings{}, func(dir string) { writeFile(t, dir, "v.pmtiles", buildMVT(t, `{"name":"V"}`)) })
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(ev.get("/tiles/v.json").Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if string(doc["vector_layers"]) != "[]" || string(doc["name"]) != `"V"` {
		t.Errorf("%s %s", doc["vector_layers"], doc["name"])
	}
}

// The base URL rules of docs/edge.md §6.4.
func TestTileJSONBaseURL(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	for _, c := range []struct {
		name, public, remote string
		tls                  bool
		hdr                  []string
		status               int
		base                 string
	}{
		{"plain", "", "192.0.2.1:1234", false, nil, 200, "http://example.com"},
		{"tls", "", "192.0.2.1:1234", true, nil, 200, "https://example.com"},
		{"untrusted forwarded ignored", "", "192.0.2.1:1234", false,
			[]string{"X-Forwarded-Proto", "https", "X-Forwarded-Host", "evil example", "X-Forwarded-Prefix", "/x/"}, 200, "http://example.com"},
		{"loopback", "", "127.0.0.1:5555", false,
			[]string{"X-Forwarded-Proto", "https", "X-Forwarded-Host", "tiles.example:8443", "X-Forwarded-Prefix", "/edge"}, 200,
			"https://tiles.example:8443/edge"},
		{"loopback v6", "", "[::1]:5555", false, []string{"X-Forwarded-Host", "[2001:db8::1]:80"}, 200, "http://[2001:db8::1]:80"},
		{"trusted proxy", "", "10.1.2.3:9", false, []string{"X-Forwarded-Proto", "HTTPS", "X-Forwarded-Prefix", "/a/b.c~d"}, 200,
			"https://example.com/a/b.c~d"},
		{"trusted v6 proxy", "", "[fd00::5]:9", false, []string{"X-Forwarded-Host", "cdn.example"}, 200, "http://cdn.example"},
		{"mapped v4", "", "[::ffff:10.0.0.1]:9", false, []string{"X-Forwarded-Host", "m.example"}, 200, "http://m.example"},
		{"unknown proto ignored", "", "127.0.0.1:1", true, []string{"X-Forwarded-Proto", "ftp"}, 200, "https://example.com"},
		{"proto downgrade", "", "127.0.0.1:1", true, []string{"X-Forwarded-Proto", "http"}, 200, "http://example.com"},
		{"bad host", "", "127.0.0.1:1", false, []string{"X-Forwarded-Host", "a b"}, 400, ""},
		{"host with path", "", "127.0.0.1:1", false, []string{"X-Forwarded-Host", "a.example/x"}, 400, ""},
		{"host colons", "", "127.0.0.1:1", false, []string{"X-Forwarded-Host", "a:b:c"}, 400, ""},
		{"host open bracket", "", "127.0.0.1:1", false, []string{"X-Forwarded-Host", "[::1"}, 400, ""},
		{"host port letters", "", "127.0.0.1:1", false, []string{"X-Forwarded-Host", "a.example:http"}, 400, ""},
		{"host list", "", "127.0.0.1:1", false, []string{"X-Forwarded-Host", "a.example, b.example"}, 400, ""},
		{"host twice", "", "127.0.0.1:1", false, []string{"X-Forwarded-Host", "a.example", "X-Forwarded-Host", "b.example"}, 400, ""},
		{"bad prefix slash", "", "127.0.0.1:1", false, []string{"X-Forwarded-Prefix", "/edge/"}, 400, ""},
		{"bad prefix relative", "", "127.0.0.1:1", false, []string{"X-Forwarded-Prefix", "edge"}, 400, ""},
		{"bad prefix chars", "", "127.0.0.1:1", false, []string{"X-Forwarded-Prefix", "/a?b"}, 400, ""},
		{"public url", "https://tiles.example.org/maps/", "127.0.0.1:1", false,
			[]string{"X-Forwarded-Host", "a b"}, 200, "https://tiles.example.org/maps"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Settings{PublicURL: c.public, TrustedProxies: trusted}
			ev := newEnv(t, s, fixtures(t, "stamen_toner_z3.pmtiles"))
			r := req(http.MethodGet, "/tiles/stamen_toner_z3.json", c.hdr...)
			r.RemoteAddr = c.remote
			if !c.tls {
				r.TLS = nil
			} else {
				r.TLS = &tlsState
			}
			w := ev.do(r)
			if w.Code != c.status {
				t.Fatalf("%d %s", w.Code, w.Body.String())
			}
			if c.status != 200 {
				if e := envelope(t, w); e.Code != "bad_request" {
					t.Errorf("code %q", e.Code)
				}
				return
			}
			var doc struct{ Tiles []string }
			if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if want := c.base + "/tiles/stamen_toner_z3/{z}/{x}/{y}.png"; len(doc.Tiles) != 1 || doc.Tiles[0] != want {
				t.Errorf("tiles %v, want %s", doc.Tiles, want)
			}
			if vary := w.Header().Get("Vary"); (c.public == "") != (vary == varyForwarded) {
				t.Errorf("Vary %q", vary)
			}
		})
	}
}

// The /packs listing of docs/edge.md §4.6: sorted by name, archive null for MBTiles.
func TestListing(t *testing.T) {
	ev := newEnv(t, Settings{}, fixtures(t, "test_fixture_1.pmtiles", "world_cities.mbtiles", "stamen_toner_z3.pmtiles"))
	w := ev.get("/packs")
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" || w.Header().Get("ETag") == "" {
		t.Fatalf("%d %v", w.Code, w.Header())
	}
	id := func(n string) string { return ev.pack(t, n).ID() }
	want := `{"packs":[` +
		`{"name":"stamen_toner_z3","kind":"pmtiles","bytes":716052,"etag":"\"pk-` + id("stamen_toner_z3") + `\"",` +
		`"tile_type":"png","minzoom":0,"maxzoom":3,"tilejson":"/tiles/stamen_toner_z3.json",` +
		`"archive":"/packs/stamen_toner_z3.pmtiles"},` +
		`{"name":"test_fixture_1","kind":"pmtiles","bytes":468,"etag":"\"pk-` + id("test_fixture_1") + `\"",` +
		`"tile_type":"mvt","minzoom":0,"maxzoom":0,"tilejson":"/tiles/test_fixture_1.json",` +
		`"archive":"/packs/test_fixture_1.pmtiles"},` +
		`{"name":"world_cities","kind":"mbtiles","bytes":` + jsonInt(ev.pack(t, "world_cities").Size()) +
		`,"etag":"\"pk-` + id("world_cities") + `\"","tile_type":"mvt","minzoom":0,"maxzoom":6,` +
		`"tilejson":"/tiles/world_cities.json","archive":null}]}` + "\n"
	if w.Body.String() != want {
		t.Errorf("got  %s\nwant %s", w.Body.String(), want)
	}
	if w := ev.get("/packs", "If-None-Match", w.Header().Get("ETag")); w.Code != 304 {
		t.Errorf("revalidation %d", w.Code)
	}
	if w := ev.do(req(http.MethodHead, "/packs")); w.Code != 200 || w.Body.Len() != 0 ||
		w.Header().Get("Content-Length") != jsonInt(int64(len(want))) {
		t.Errorf("HEAD %d %v", w.Code, w.Header())
	}
}

// tlsState marks a request as received over TLS.
var tlsState tls.ConnectionState

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
