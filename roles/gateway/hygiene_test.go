package gateway

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/gateway/hygiene"
	"github.com/ronhq/ron/roles/gateway/upstream"
	"github.com/ronhq/ron/store"
)

// upstreamHeaders answers with hop-by-hop, Connection-named, X-Ron-* and
// repeated headers: what FromUpstream must strip or keep.
func upstreamHeaders(w http.ResponseWriter, _ *http.Request, _ []byte) {
	h := w.Header()
	h.Set("Connection", "X-Up-Hop")
	h.Set("X-Up-Hop", "1")
	h.Set("Keep-Alive", "timeout=5")
	h.Set("Proxy-Authenticate", "Basic")
	h.Set("X-Ron-Internal", "secret")
	h.Add("Set-Cookie", "a=1")
	h.Add("Set-Cookie", "b=2")
	h.Set("X-Up-Keep", "yes")
	_, _ = w.Write([]byte("body"))
}

// clientHeaders are what a client sends that must not reach an upstream as
// sent (name, value pairs), besides its Authorization.
var clientHeaders = []string{
	"Connection", "X-Secret-Hop, Keep-Alive",
	"X-Secret-Hop", "1",
	"Keep-Alive", "timeout=5",
	"Proxy-Authorization", "Basic eDp5",
	"Te", "trailers",
	"Cookie", "session=1",
	"Forwarded", "for=198.51.100.1",
	"X-Forwarded-For", "198.51.100.1",
	"X-Forwarded-Host", "evil.example",
	"X-Forwarded-Proto", "https",
	"X-Forwarded-Prefix", "/evil",
	"X-Ron-Tenant", "someone-else",
	"X-Ron-Other", "x",
	"X-Custom", "keep",
}

// TestHeaderHygieneBothWays (docs/gateway.md §6, docs/gateway.md §2): on every kind of trusted link the
// upstream gets none of the client's hop-by-hop, Connection-named,
// Authorization, Cookie, Forwarded, X-Forwarded-* or X-Ron-* headers but
// the gateway's own link headers; the client gets none of the upstream's
// hop-by-hop, Connection-named or X-Ron-* headers and every Set-Cookie.
func TestHeaderHygieneBothWays(t *testing.T) {
	wirings := []struct {
		name  string
		wire  func(t *testing.T, cfg *Config, s *stub) Locals
		token func(t *testing.T, h *harness, got seen) // checks the link credentials
	}{
		{name: "http link, minted token", wire: func(t *testing.T, cfg *Config, s *stub) Locals {
			cfg.StorageURL = s.listen(t)
			return Locals{}
		}, token: func(t *testing.T, h *harness, got seen) {
			req := &http.Request{Header: got.header}
			claims, err := auth.Check(h.keys, req, "storage:write", time.Now())
			if err != nil {
				t.Fatalf("link token: %v", err)
			}
			if claims.Tenant != "" || !slices.Equal(claims.Scopes, []string{"storage:write", "index:write"}) {
				t.Errorf("link token tenant %q scopes %v, want none and [storage:write index:write]", claims.Tenant, claims.Scopes)
			}
		}},
		{name: "http link, upstream_token", wire: func(t *testing.T, cfg *Config, s *stub) Locals {
			cfg.StorageURL, cfg.UpstreamToken = s.listen(t), "static-link-token"
			return Locals{}
		}, token: func(t *testing.T, _ *harness, got seen) {
			if a := got.header.Values("Authorization"); !slices.Equal(a, []string{"Bearer static-link-token"}) {
				t.Errorf("Authorization %q, want the upstream_token", a)
			}
		}},
		{name: "in-process", wire: func(_ *testing.T, _ *Config, s *stub) Locals {
			return Locals{Storage: s.handler()}
		}, token: func(t *testing.T, _ *harness, got seen) {
			if a := got.header.Values("Authorization"); len(a) != 0 {
				t.Errorf("in-process call carries Authorization %q", a)
			}
			if got.claims == nil || got.claims.ID != upstream.LinkPrincipalID {
				t.Errorf("in-process principal %+v, want the link principal", got.claims)
			}
		}},
	}
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			s := newStub(upstreamHeaders)
			cfg := baseConfig()
			loc := w.wire(t, &cfg, s)
			h := startGateway(t, cfg, loc)
			kv := append([]string{"Authorization", h.bearer("acme", "storage:read")}, clientHeaders...)
			a := h.do("GET", "/o/"+store.Sum([]byte("x")).String(), nil, kv...)
			if a.status != http.StatusOK || string(a.body) != "body" {
				t.Fatalf("GET: %s, want the upstream's 200", a)
			}
			reqs := s.requests()
			if len(reqs) != 1 {
				t.Fatalf("upstream received %d requests, want 1", len(reqs))
			}
			got := reqs[0]
			checkToUpstream(t, h, got)
			w.token(t, h, got)
			checkFromUpstream(t, a.header)
		})
	}
}

// checkToUpstream checks the request headers an upstream received.
func checkToUpstream(t *testing.T, h *harness, got seen) {
	t.Helper()
	for _, k := range []string{"Connection", "X-Secret-Hop", "Keep-Alive", "Proxy-Authorization", "Te",
		"Cookie", "Forwarded", "X-Forwarded-Prefix", "X-Ron-Other"} {
		if v := got.header.Values(k); len(v) != 0 {
			t.Errorf("upstream received %s: %q", k, v)
		}
	}
	host := strings.TrimPrefix(h.base, "http://")
	for k, v := range map[string]string{"X-Ron-Tenant": "acme", "X-Forwarded-For": "127.0.0.1",
		"X-Forwarded-Host": host, "X-Forwarded-Proto": "http", "X-Custom": "keep"} {
		if g := got.header.Values(k); !slices.Equal(g, []string{v}) {
			t.Errorf("upstream %s = %q, want %q", k, g, v)
		}
	}
	if got.header.Get("X-Corr-ID") == "" || got.header.Get("Request-Timeout") == "" {
		t.Errorf("upstream lacks X-Corr-ID or Request-Timeout: %v", got.header)
	}
}

// checkFromUpstream checks the response headers the client received.
func checkFromUpstream(t *testing.T, got http.Header) {
	t.Helper()
	for _, k := range []string{"X-Up-Hop", "Keep-Alive", "Proxy-Authenticate", "X-Ron-Internal"} {
		if v := got.Values(k); len(v) != 0 {
			t.Errorf("client received %s: %q", k, v)
		}
	}
	if c := got.Values("Set-Cookie"); !slices.Equal(c, []string{"a=1", "b=2"}) {
		t.Errorf("Set-Cookie = %q, want both values in order", c)
	}
	if got.Get("X-Up-Keep") != "yes" || got.Get("X-Content-Type-Options") != "nosniff" || got.Get("X-Corr-ID") == "" {
		t.Errorf("client headers %v: want X-Up-Keep, nosniff and X-Corr-ID", got)
	}
}

// TestForwardedForTrust (docs/gateway.md §3.3): X-Forwarded-For is believed only from a
// trusted proxy; otherwise the TCP peer is the client and its tenant.
func TestForwardedForTrust(t *testing.T) {
	for _, row := range []struct {
		name     string
		trusted  []string
		wantXFF  string
		wantAnon string
	}{
		{"untrusted peer", nil, "127.0.0.1", "anon:127.0.0.0/24"},
		{"trusted proxy", []string{"127.0.0.0/8"}, "203.0.113.7", "anon:203.0.113.0/24"},
	} {
		t.Run(row.name, func(t *testing.T) {
			s := newStub(nil)
			cfg := baseConfig()
			cfg.StorageURL, cfg.TrustedProxy = s.listen(t), row.trusted
			h := startGateway(t, cfg, Locals{})
			a := h.do("GET", "/o/"+store.Sum([]byte("x")).String(), nil,
				"X-Forwarded-For", "203.0.113.7", "X-Ron-Tenant", "acme")
			if a.status != http.StatusOK {
				t.Fatalf("GET: %s", a)
			}
			got := s.requests()[0].header
			if got.Get("X-Forwarded-For") != row.wantXFF || got.Get("X-Ron-Tenant") != row.wantAnon {
				t.Errorf("upstream X-Forwarded-For %q X-Ron-Tenant %q, want %q %q",
					got.Get("X-Forwarded-For"), got.Get("X-Ron-Tenant"), row.wantXFF, row.wantAnon)
			}
		})
	}
}

// TestHeadKeepsContentLength: a HEAD answer keeps the upstream's
// Content-Length (docs/gateway.md §6).
func TestHeadKeepsContentLength(t *testing.T) {
	data := make([]byte, 1234)
	s := newStub(serveObjects(false, object{data: data, ctype: "application/octet-stream"}))
	cfg := baseConfig()
	cfg.StorageURL = s.listen(t)
	h := startGateway(t, cfg, Locals{})
	a := h.do("HEAD", "/o/"+store.Sum(data).String(), nil)
	if a.status != http.StatusOK || a.header.Get("Content-Length") != "1234" || len(a.body) != 0 {
		t.Fatalf("HEAD: %s Content-Length %q, want 200 and 1234", a, a.header.Get("Content-Length"))
	}
}

// TestCORS (docs/gateway.md §6): reads get CORS headers under "*"; preflights and actual
// writes admit only origins listed explicitly.
func TestCORS(t *testing.T) {
	const app, other = "https://app.example", "https://other.example"
	id := "/o/" + store.Sum([]byte("x")).String()
	type row struct {
		name         string
		method, path string
		origin       string
		write        bool // send a write token
		allowOrigin  string
		allowMethods string
		vary         bool
	}
	for _, set := range []struct {
		origins []string
		rows    []row
	}{
		{[]string{"*", app}, []row{
			{name: "read, any origin", method: "GET", path: id, origin: other, allowOrigin: "*"},
			{name: "read, no origin", method: "GET", path: id},
			{name: "write preflight, listed origin", method: "OPTIONS", path: "/o", origin: app,
				allowOrigin: app, allowMethods: hygiene.WriteMethods, vary: true},
			{name: "write preflight, origin only under *", method: "OPTIONS", path: "/o", origin: other,
				allowOrigin: "*", allowMethods: hygiene.ReadMethods},
			{name: "write, listed origin", method: "POST", path: "/o", origin: app, write: true, allowOrigin: app, vary: true},
			{name: "write, origin only under *", method: "POST", path: "/o", origin: other, write: true, vary: true},
		}},
		{[]string{app}, []row{
			{name: "read, listed origin", method: "GET", path: id, origin: app, allowOrigin: app, vary: true},
			{name: "read, other origin", method: "GET", path: id, origin: other, vary: true},
			{name: "preflight, other origin", method: "OPTIONS", path: id, origin: other, vary: true},
		}},
	} {
		s := newStub(nil)
		cfg := baseConfig()
		cfg.StorageURL, cfg.CORSOrigins = s.listen(t), set.origins
		h := startGateway(t, cfg, Locals{})
		for _, r := range set.rows {
			t.Run(strings.Join(set.origins, ",")+"/"+r.name, func(t *testing.T) {
				kv := []string{"Access-Control-Request-Method", "POST"}
				if r.origin != "" {
					kv = append(kv, "Origin", r.origin)
				}
				if r.write {
					kv = append(kv, "Authorization", h.bearer("", "storage:write"))
				}
				a := h.with(t).do(r.method, r.path, []byte{}, kv...)
				if a.status/100 != 2 {
					t.Fatalf("%s %s: %s", r.method, r.path, a)
				}
				checkCORS(t, a.header, r.allowOrigin, r.allowMethods, r.vary)
			})
		}
	}
}

// checkCORS checks the Access-Control-* and Vary headers of one answer.
func checkCORS(t *testing.T, h http.Header, allowOrigin, allowMethods string, vary bool) {
	t.Helper()
	if got := h.Get("Access-Control-Allow-Origin"); got != allowOrigin {
		t.Errorf("Access-Control-Allow-Origin %q, want %q", got, allowOrigin)
	}
	if got := h.Get("Access-Control-Allow-Methods"); got != allowMethods {
		t.Errorf("Access-Control-Allow-Methods %q, want %q", got, allowMethods)
	}
	if allowOrigin != "" && allowMethods == "" && h.Get("Access-Control-Expose-Headers") != hygiene.ExposeHeaders {
		t.Errorf("Access-Control-Expose-Headers %q, want %q", h.Get("Access-Control-Expose-Headers"), hygiene.ExposeHeaders)
	}
	if got := slices.Contains(h.Values("Vary"), "Origin"); got != vary {
		t.Errorf("Vary %q: Origin listed %v, want %v", h.Values("Vary"), got, vary)
	}
}

// TestEdgeForwardedWithoutPrefix: /edge/{rest} reaches the edge as /{rest},
// re-escaped, with X-Forwarded-Prefix: /edge (docs/gateway.md §1, docs/gateway.md §2).
func TestEdgeForwardedWithoutPrefix(t *testing.T) {
	s := newStub(nil)
	cfg := baseConfig()
	cfg.StorageURL, cfg.EdgeURL = s.listen(t), s.listen(t)
	h := startGateway(t, cfg, Locals{})
	for _, row := range []struct{ path, want, query string }{
		{"/edge/tiles/world/3/4/5.pbf", "/tiles/world/3/4/5.pbf", ""},
		{"/edge/assets/a%20b.png?v=2", "/assets/a%20b.png", "v=2"},
		{"/edge/", "/", ""},
	} {
		before := s.count()
		if a := h.do("GET", row.path, nil); a.status != http.StatusOK {
			t.Fatalf("GET %s: %s", row.path, a)
		}
		got := s.requests()[before]
		if got.path != row.want || got.query != row.query || got.header.Get("X-Forwarded-Prefix") != "/edge" {
			t.Errorf("GET %s reached the edge as %s?%s with X-Forwarded-Prefix %q, want %s?%s and /edge",
				row.path, got.path, got.query, got.header.Get("X-Forwarded-Prefix"), row.want, row.query)
		}
	}
}

// TestReadBodiesDropped (docs/gateway.md §3.1): a body sent with GET or HEAD is neither
// read nor forwarded.
func TestReadBodiesDropped(t *testing.T) {
	s := newStub(nil)
	cfg := baseConfig()
	cfg.StorageURL = s.listen(t)
	h := startGateway(t, cfg, Locals{})
	for _, m := range []string{"GET", "HEAD"} {
		if a := h.do(m, "/o/"+store.Sum([]byte("x")).String(), []byte("ignored body")); a.status != http.StatusOK {
			t.Fatalf("%s with a body: %s", m, a)
		}
	}
	for _, r := range s.requests() {
		if len(r.body) != 0 || r.contentLength > 0 || r.header.Get("Content-Length") != "" {
			t.Errorf("%s reached storage with a body: %q (Content-Length %d)", r.method, r.body, r.contentLength)
		}
	}
}

// TestDecodedJSONForwarded (docs/gateway.md §3.2, docs/gateway.md §1): a gzip or brotli PUT /names body
// reaches the index decoded, without Content-Encoding and the encoded
// length; If-Match passes through.
func TestDecodedJSONForwarded(t *testing.T) {
	s := newStub(nil)
	cfg := baseConfig()
	cfg.StorageURL, cfg.IndexURL = s.listen(t), s.listen(t)
	h := startGateway(t, cfg, Locals{})
	plain := []byte(`{"b3":"` + store.Sum([]byte("x")).String() + `"}`)
	for _, enc := range []struct {
		name string
		body []byte
	}{{"gzip", gzipOf(t, plain)}, {"br", brotliOf(t, plain)}, {"identity", plain}} {
		before := s.count()
		a := h.do("PUT", "/names/site", enc.body, "Authorization", h.bearer("", "index:write"),
			"Content-Type", "application/json", "Content-Encoding", enc.name, "If-Match", `"3"`)
		if a.status != http.StatusOK {
			t.Fatalf("PUT /names with %s: %s", enc.name, a)
		}
		got := s.requests()[before]
		if !bytes.Equal(got.body, plain) || got.header.Get("Content-Encoding") != "" && enc.name != "identity" {
			t.Errorf("%s: the index got %q with Content-Encoding %q, want the decoded JSON without it",
				enc.name, got.body, got.header.Get("Content-Encoding"))
		}
		if got.header.Get("If-Match") != `"3"` {
			t.Errorf("%s: If-Match %q reached the index, want passed through", enc.name, got.header.Get("If-Match"))
		}
		if enc.name != "identity" && got.contentLength == int64(len(enc.body)) {
			t.Errorf("%s: the index got the encoded Content-Length %d", enc.name, got.contentLength)
		}
	}
}

// TestRequestTimeoutForwarded (docs/gateway.md §2): the upstream is told the time left, at
// most the client's Request-Timeout.
func TestRequestTimeoutForwarded(t *testing.T) {
	s := newStub(nil)
	cfg := baseConfig()
	cfg.StorageURL = s.listen(t)
	h := startGateway(t, cfg, Locals{})
	for _, sent := range []string{"", "2", "0.5"} {
		var kv []string
		limit := cfg.ForwardTimeout.Seconds()
		if sent != "" {
			kv = []string{"Request-Timeout", sent}
			limit, _ = strconv.ParseFloat(sent, 64)
		}
		before := s.count()
		if a := h.do("GET", "/o/"+store.Sum([]byte("x")).String(), nil, kv...); a.status != http.StatusOK {
			t.Fatalf("GET: %s", a)
		}
		v := s.requests()[before].header.Get("Request-Timeout")
		got, err := strconv.ParseFloat(v, 64)
		if err != nil || got <= 0 || got > limit {
			t.Errorf("Request-Timeout %q sent: upstream got %q, want a positive number ≤ %v", sent, v, limit)
		}
	}
}
