package index

import (
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
)

// newCompatEnv is newEnv with the docs/index.md §10 routes mounted as compat_routes=true
// does.
func newCompatEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.h.MountCompat(e.srv.Echo())
	return e
}

const (
	sitePath  = "/v1/index/sites/blog.example/manifest"
	assetPath = "/v1/index/assets/" + idA + "/manifest"
	// nowMs is the test clock's start in Unix milliseconds.
	nowMs = "1795341600000"
)

func TestCompatSitePutGet(t *testing.T) {
	e := newCompatEnv(t)
	r := e.do(req{method: "PUT", path: sitePath, token: e.writer,
		body: `{"manifest_cid":"` + idA + `","owner_passport_subject":"passport:main:alice","updated_at_ms":5}`})
	expect(t, r, 202, "")
	want := `{"version":1,"name":"blog.example","manifest_cid":"` + idA +
		`","owner_passport_subject":null,"owner_wallet_account":null,"updated_at_ms":` + nowMs + "}\n"
	if string(r.body) != want || r.hdr.Get("ETag") != `"1"` {
		t.Fatalf("PUT %v %s", r.hdr, r.body)
	}
	g := e.do(req{method: "GET", path: sitePath})
	expect(t, g, 200, "")
	if string(g.body) != want || g.hdr.Get("ETag") != `"1"` || g.hdr.Get("Cache-Control") != "no-cache" {
		t.Fatalf("GET %v %s", g.hdr, g.body)
	}
	// The site is the name pointer: both views agree.
	n := e.do(req{method: "GET", path: "/names/blog.example"})
	if n.json(t)["b3"] != idA || n.json(t)["version"] != 1.0 {
		t.Fatalf("name %s", n.body)
	}
	// Bare hex; every PUT is a new version; a name PUT shows through.
	e.clk.Advance(time.Second)
	r = e.do(req{method: "PUT", path: sitePath, token: e.writer, body: `{"manifest_cid":"` + idB[3:] + `"}`})
	expect(t, r, 202, "")
	if r.json(t)["manifest_cid"] != idB || r.hdr.Get("ETag") != `"2"` || r.json(t)["updated_at_ms"] != 1795341601000.0 {
		t.Fatalf("bare hex %v %s", r.hdr, r.body)
	}
	expect(t, e.put("blog.example", idA, nil), 200, "")
	if g := e.do(req{method: "GET", path: sitePath}); g.json(t)["manifest_cid"] != idA || g.hdr.Get("ETag") != `"3"` {
		t.Fatalf("after name PUT %v %s", g.hdr, g.body)
	}
}

func TestCompatSitePreconditions(t *testing.T) {
	e := newCompatEnv(t)
	body := `{"manifest_cid":"` + idA + `"}`
	put := func(hdr map[string]string) resp {
		return e.do(req{method: "PUT", path: sitePath, token: e.writer, body: body, hdr: hdr})
	}
	expect(t, put(map[string]string{"If-None-Match": "*"}), 202, "")
	r := put(map[string]string{"If-None-Match": "*"})
	expect(t, r, 412, "precondition_failed")
	if r.details(t)["current_version"] != 1.0 {
		t.Fatalf("details %v", r.details(t))
	}
	expect(t, put(map[string]string{"If-Match": `"1"`}), 202, "")
	expect(t, put(map[string]string{"If-Match": `"1"`}), 412, "precondition_failed")
	expect(t, put(map[string]string{"If-Match": "1"}), 400, "bad_request")
}

func TestCompatSiteNotFound(t *testing.T) {
	e := newCompatEnv(t)
	expect(t, e.do(req{method: "GET", path: sitePath}), 404, "not_found")
	expect(t, e.put("blog.example", idA, nil), 200, "")
	expect(t, e.do(req{method: "DELETE", path: "/names/blog.example", token: e.writer}), 200, "")
	r := e.do(req{method: "GET", path: sitePath})
	expect(t, r, 404, "not_found")
	if r.details(t)["reason"] != "deleted" {
		t.Fatalf("details %v", r.details(t))
	}
}

// compatBadCase is one bad compat request.
type compatBadCase struct {
	name   string
	q      req
	status int
	code   string
	field  string // expected details.field, "" = not checked
}

func compatBadCases(e *env) []compatBadCase {
	site := func(body string) req { return req{method: "PUT", path: sitePath, token: e.writer, body: body} }
	asset := func(body string) req { return req{method: "PUT", path: assetPath, token: e.writer, body: body} }
	okSite := `{"manifest_cid":"` + idA + `"}`
	okAsset := `{"asset_kind":"image","manifest_cid":"` + idB + `"}`
	big := `{"manifest_cid":"` + idA + `","owner_wallet_account":"` + strings.Repeat("x", 1<<20) + `"}`
	return []compatBadCase{
		{"site uppercase name", req{method: "PUT", path: "/v1/index/sites/Blog.example/manifest", token: e.writer, body: okSite}, 400, "bad_request", ""},
		{"site underscore GET", req{method: "GET", path: "/v1/index/sites/blog_example/manifest"}, 400, "bad_request", ""},
		{"site non-ASCII GET", req{method: "GET", path: "/v1/index/sites/b%C3%BCcher.example/manifest"}, 400, "bad_request", ""},
		{"site name@version", req{method: "GET", path: "/v1/index/sites/blog.example@1/manifest"}, 400, "bad_request", ""},
		{"site not JSON", site(`nope`), 400, "malformed", ""},
		{"site empty body", req{method: "PUT", path: sitePath, token: e.writer, ctype: "application/json"}, 400, "malformed", ""},
		{"site unknown field", site(`{"manifest_cid":"` + idA + `","extra":1}`), 400, "malformed", ""},
		{"site trailing data", site(okSite + `{}`), 400, "malformed", ""},
		{"site cid not string", site(`{"manifest_cid":7}`), 400, "malformed", ""},
		{"site negative time", site(`{"manifest_cid":"` + idA + `","updated_at_ms":-1}`), 400, "malformed", ""},
		{"site float time", site(`{"manifest_cid":"` + idA + `","updated_at_ms":1.5}`), 400, "malformed", ""},
		{"site missing cid", site(`{}`), 400, "bad_request", "manifest_cid"},
		{"site null cid", site(`{"manifest_cid":null}`), 400, "bad_request", "manifest_cid"},
		{"site uppercase cid", site(`{"manifest_cid":"` + strings.ToUpper(idA) + `"}`), 400, "bad_request", "manifest_cid"},
		{"site short cid", site(`{"manifest_cid":"` + idA[:66] + `"}`), 400, "bad_request", "manifest_cid"},
		{"site zero time", site(`{"manifest_cid":"` + idA + `","updated_at_ms":0}`), 400, "bad_request", "updated_at_ms"},
		{"site huge time", site(`{"manifest_cid":"` + idA + `","updated_at_ms":18446744073709551615}`), 400, "bad_request", "updated_at_ms"},
		{"site control in owner", site(`{"manifest_cid":"` + idA + `","owner_passport_subject":"a\nb"}`), 400, "bad_request", "owner_passport_subject"},
		{"site long owner", site(`{"manifest_cid":"` + idA + `","owner_wallet_account":"` + strings.Repeat("w", 513) + `"}`), 400, "bad_request", "owner_wallet_account"},
		{"site text/plain", req{method: "PUT", path: sitePath, token: e.writer, body: okSite, ctype: "text/plain"}, 415, "unsupported_media_type", ""},
		{"site > 1 MiB", site(big), 413, "payload_too_large", ""},
		{"site no token", req{method: "PUT", path: sitePath, body: okSite}, 401, "unauthorized", ""},
		{"site wrong scope", req{method: "PUT", path: sitePath, token: e.reader, body: okSite}, 403, "forbidden", ""},
		{"asset bad path id", req{method: "PUT", path: "/v1/index/assets/b3:xyz/manifest", token: e.writer, body: okAsset}, 400, "bad_request", ""},
		{"asset uppercase path GET", req{method: "GET", path: "/v1/index/assets/" + strings.ToUpper(idA[3:]) + "/manifest"}, 400, "bad_request", ""},
		{"asset missing kind", asset(`{"manifest_cid":"` + idB + `"}`), 400, "bad_request", "asset_kind"},
		{"asset unknown kind", asset(`{"asset_kind":"photo","manifest_cid":"` + idB + `"}`), 400, "bad_request", "asset_kind"},
		{"asset missing cid", asset(`{"asset_kind":"image"}`), 400, "bad_request", "manifest_cid"},
		{"asset bad cid", asset(`{"asset_kind":"image","manifest_cid":"b3:00"}`), 400, "bad_request", "manifest_cid"},
		{"asset zero time", asset(`{"asset_kind":"image","manifest_cid":"` + idB + `","updated_at_ms":0}`), 400, "bad_request", "updated_at_ms"},
		{"asset unknown field", asset(`{"asset_kind":"image","manifest_cid":"` + idB + `","name":"x"}`), 400, "malformed", ""},
		{"asset kind not string", asset(`{"asset_kind":1,"manifest_cid":"` + idB + `"}`), 400, "malformed", ""},
		{"asset text/plain", req{method: "PUT", path: assetPath, token: e.writer, body: okAsset, ctype: "text/plain"}, 415, "unsupported_media_type", ""},
		{"asset no token", req{method: "PUT", path: assetPath, body: okAsset}, 401, "unauthorized", ""},
		{"asset wrong scope", req{method: "PUT", path: assetPath, token: e.reader, body: okAsset}, 403, "forbidden", ""},
	}
}

func TestCompatBadInput(t *testing.T) {
	e := newCompatEnv(t)
	for _, tc := range compatBadCases(e) {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.q)
			expect(t, r, tc.status, tc.code)
			if tc.field != "" && r.details(t)["field"] != tc.field {
				t.Fatalf("details %v", r.details(t))
			}
		})
	}
	// Nothing above wrote anything.
	expect(t, e.do(req{method: "GET", path: sitePath}), 404, "not_found")
	expect(t, e.do(req{method: "GET", path: assetPath}), 404, "not_found")
}

func TestCompatAssetPutGet(t *testing.T) {
	e := newCompatEnv(t)
	expect(t, e.do(req{method: "GET", path: assetPath}), 404, "not_found")
	r := e.do(req{method: "PUT", path: "/v1/index/assets/" + idA[3:] + "/manifest", token: e.writer,
		body: `{"asset_kind":" Image ","manifest_cid":"` + idB[3:] + `","owner_wallet_account":" acct_alice ","owner_passport_subject":""}`})
	expect(t, r, 202, "")
	want := `{"version":1,"asset_cid":"` + idA + `","asset_kind":"image","manifest_cid":"` + idB +
		`","owner_passport_subject":null,"owner_wallet_account":"acct_alice","updated_at_ms":` + nowMs + "}\n"
	if string(r.body) != want {
		t.Fatalf("PUT %s", r.body)
	}
	for _, p := range []string{assetPath, "/v1/index/assets/" + idA[3:] + "/manifest"} {
		g := e.do(req{method: "GET", path: p})
		expect(t, g, 200, "")
		if string(g.body) != want || g.hdr.Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s: %v %s", p, g.hdr, g.body)
		}
	}
	// A later PUT replaces the pointer; a given updated_at_ms is kept.
	r = e.do(req{method: "PUT", path: assetPath, token: e.writer,
		body: `{"asset_kind":"video","manifest_cid":"` + idA + `","updated_at_ms":1776000000000}`})
	expect(t, r, 202, "")
	g := e.do(req{method: "GET", path: assetPath})
	if m := g.json(t); m["asset_kind"] != "video" || m["manifest_cid"] != idA || m["updated_at_ms"] != 1776000000000.0 ||
		m["owner_wallet_account"] != nil {
		t.Fatalf("replaced %s", g.body)
	}
	// Assets are not names.
	expect(t, e.do(req{method: "GET", path: "/resolve/" + idA}), 404, "not_found")
}

func TestCompatResolveNamePrefix(t *testing.T) {
	e := newCompatEnv(t)
	expect(t, e.put("blog.example", idA, nil), 200, "")
	expect(t, e.announce(batch(rec(idA, "n1", `,"type":"application/vnd.ron.manifest+json"`))), 200, "")
	for _, key := range []string{"blog.example", "blog.example@1"} {
		plain := e.do(req{method: "GET", path: "/resolve/" + key})
		prefixed := e.do(req{method: "GET", path: "/resolve/name:" + key})
		expect(t, prefixed, 200, "")
		if string(plain.body) != string(prefixed.body) || plain.hdr.Get("Cache-Control") != prefixed.hdr.Get("Cache-Control") {
			t.Fatalf("%s: %s vs %s", key, plain.body, prefixed.body)
		}
	}
	for _, key := range []string{"name:Blog.example", "name:", "name:" + idA, "name:blog.example@0"} {
		expect(t, e.do(req{method: "GET", path: "/resolve/" + key}), 400, "bad_request")
	}
	expect(t, e.do(req{method: "GET", path: "/resolve/name:gone.example"}), 404, "not_found")
	// Keys that merely start with "name" still take the ordinary route.
	expect(t, e.put("names.example", idA, nil), 200, "")
	expect(t, e.do(req{method: "GET", path: "/resolve/names.example"}), 200, "")
}

// TestCompatNotMounted: without MountCompat (compat_routes = false) none of
// the docs/index.md §10 routes exist and "name:" is not a resolve prefix.
func TestCompatNotMounted(t *testing.T) {
	e := newEnv(t)
	expect(t, e.do(req{method: "GET", path: sitePath}), 404, "not_found")
	expect(t, e.do(req{method: "PUT", path: assetPath, token: e.writer, body: `{}`}), 404, "not_found")
	expect(t, e.do(req{method: "GET", path: "/resolve/name:blog.example"}), 400, "bad_request")
}

// TestCompatScopesAndMiddleware: the compat routes check capabilities
// first (reads only when private), then run the role's middleware.
func TestCompatScopesAndMiddleware(t *testing.T) {
	e := newEnv(t)
	e.h.set(func(s *Settings) { s.PrivateReads = true })
	busy := func(echo.HandlerFunc) echo.HandlerFunc {
		return func(echo.Context) error { return httpx.NewError(429, httpx.CodeBusy, "queue full") }
	}
	e.h.MountCompat(e.srv.Echo(), busy)
	body := `{"manifest_cid":"` + idA + `"}`
	for _, q := range []req{
		{method: "GET", path: sitePath},
		{method: "GET", path: assetPath},
		{method: "GET", path: "/resolve/name:blog.example"},
		{method: "PUT", path: sitePath, body: body},
		{method: "PUT", path: assetPath, body: body},
	} {
		expect(t, e.do(q), 401, "unauthorized")
	}
	expect(t, e.do(req{method: "PUT", path: sitePath, body: body, token: e.reader}), 403, "forbidden")
	expect(t, e.do(req{method: "PUT", path: sitePath, body: body, token: e.writer}), 429, "busy")
	expect(t, e.do(req{method: "PUT", path: assetPath, body: body, token: e.writer}), 429, "busy")
}
