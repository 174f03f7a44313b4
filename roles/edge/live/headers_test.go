package live

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/textproto"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
)

// TestForwardHeader: what the origin gets of the client's header (docs/edge.md §7.5).
func TestForwardHeader(t *testing.T) {
	in := http.Header{
		"Authorization":       {"Bearer secret"},
		"X-Ron-Token":         {"t"},
		"X-Ron-Tenant":        {"a"},
		"Connection":          {"keep-alive, X-Hop"},
		"X-Hop":               {"1"},
		"Keep-Alive":          {"timeout=5"},
		"Te":                  {"trailers"},
		"Upgrade":             {"h2c"},
		"Proxy-Authorization": {"Basic x"},
		"Host":                {"edge.example"},
		"Expect":              {"100-continue"},
		"Via":                 {"1.0 client-proxy"},
		"X-Forwarded-For":     {"203.0.113.7"},
		"Accept":              {"a/b", "c/d"},
		"Cache-Control":       {"no-cache"},
	}
	tests := []struct {
		name string
		o    Origin
		p    peer
		auth string
		xff  string
		ua   []string
	}{
		{"untrusted peer", Origin{}, peer{addr: "198.51.100.1"}, "", "198.51.100.1", []string{""}},
		{"trusted peer", Origin{ForwardAuthorization: true}, peer{addr: "127.0.0.1", trusted: true}, "Bearer secret", "203.0.113.7, 127.0.0.1", []string{""}},
		{"in-process", Origin{}, peer{trusted: true}, "", "203.0.113.7", []string{""}},
	}
	for _, tc := range tests {
		h := forwardHeader(in, tc.o, tc.p)
		for _, gone := range []string{"X-Ron-Token", "X-Ron-Tenant", "Connection", "X-Hop", "Keep-Alive", "Te", "Upgrade",
			"Proxy-Authorization", "Host", "Expect"} {
			if _, ok := h[gone]; ok {
				t.Errorf("%s: %s forwarded", tc.name, gone)
			}
		}
		if got := h.Get("Authorization"); got != tc.auth {
			t.Errorf("%s: Authorization %q", tc.name, got)
		}
		if got := h.Get("X-Forwarded-For"); got != tc.xff {
			t.Errorf("%s: X-Forwarded-For %q, want %q", tc.name, got, tc.xff)
		}
		if got := h.Values("Via"); !slices.Equal(got, []string{"1.0 client-proxy", "1.1 ron-edge"}) {
			t.Errorf("%s: Via %q", tc.name, got)
		}
		if !slices.Equal(h.Values("Accept"), []string{"a/b", "c/d"}) || h.Get("Cache-Control") != "no-cache" {
			t.Errorf("%s: end-to-end fields changed: %v", tc.name, h)
		}
		if !slices.Equal(h["User-Agent"], tc.ua) {
			t.Errorf("%s: User-Agent %q", tc.name, h["User-Agent"])
		}
	}
	if in.Get("X-Ron-Token") != "t" {
		t.Error("forwardHeader modified its input")
	}
}

func TestPeerOf(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct {
		remote string
		want   peer
	}{
		{"198.51.100.1:5000", peer{addr: "198.51.100.1"}},
		{"127.0.0.1:5000", peer{addr: "127.0.0.1", trusted: true}},
		{"[::1]:5000", peer{addr: "::1", trusted: true}},
		{"10.1.2.3:80", peer{addr: "10.1.2.3", trusted: true}},
		{"[::ffff:10.1.2.3]:80", peer{addr: "10.1.2.3", trusted: true}},
		{"inproc", peer{trusted: true}},
	} {
		r := &http.Request{RemoteAddr: tc.remote}
		if got := peerOf(r, trusted); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.remote, got, tc.want)
		}
	}
}

// TestHeadersOnTheWire: the origin sees Host, Via, X-Forwarded-For and no
// User-Agent of its own; the client gets the origin's end-to-end fields,
// repeated lines kept, hop-by-hop and Connection-named ones dropped.
func TestHeadersOnTheWire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(func(w http.ResponseWriter, _ *http.Request) {
			h := w.Header()
			h["Set-Cookie"] = []string{"a=1", "b=2"}
			h.Set("Connection", "X-Secret")
			h.Set("X-Secret", "s")
			h.Set("Keep-Alive", "timeout=1")
			h.Set("Cache-Control", "max-age=60")
			_, _ = w.Write([]byte("w"))
		})
		for range 2 { // the miss, then the hit
			rec := e.get("/assets/o/hd", "X-Ron-Token", "x", "Authorization", "Bearer a", "User-Agent", "client/1")
			if got := rec.Header().Values("Set-Cookie"); !slices.Equal(got, []string{"a=1", "b=2"}) {
				t.Errorf("Set-Cookie %q", got)
			}
			for _, gone := range []string{"X-Secret", "Keep-Alive", "Connection"} {
				if v := rec.Header().Get(gone); v != "" {
					t.Errorf("%s relayed: %q", gone, v)
				}
			}
		}
		req := e.o.last()
		if req.Host != originHost || req.Header.Get("Via") != "1.1 ron-edge" || req.Header.Get("X-Forwarded-For") != "192.0.2.1" ||
			req.Header.Get("User-Agent") != "client/1" || req.Header.Get("X-Ron-Token") != "" || req.Header.Get("Authorization") != "" {
			t.Errorf("origin saw Host %q and %v", req.Host, req.Header)
		}
		e.get("/assets/o/noua")
		if ua, ok := e.o.last().Header["User-Agent"]; ok {
			t.Errorf("a User-Agent was added: %q", ua)
		}
		if ae := e.o.last().Header.Get("Accept-Encoding"); ae != "" {
			t.Errorf("Accept-Encoding %q added", ae)
		}
	})
}

// TestAuthorizationStorability: with forward_authorization the origin
// gets Authorization, and such responses are stored only with public,
// s-maxage or must-revalidate.
func TestAuthorizationStorability(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{origin: func(o *Origin) { o.ForwardAuthorization = true }})
		e.o.set(reply(200, "a", "Cache-Control", "max-age=60"))
		e.get("/assets/o/au", "Authorization", "Bearer x")
		e.get("/assets/o/au", "Authorization", "Bearer x")
		if e.o.count() != 2 || e.o.last().Header.Get("Authorization") != "Bearer x" {
			t.Fatalf("origin saw %d, Authorization %q", e.o.count(), e.o.last().Header.Get("Authorization"))
		}
		e.o.set(reply(200, "a", "Cache-Control", "max-age=60, public"))
		e.get("/assets/o/au2", "Authorization", "Bearer x")
		e.get("/assets/o/au2", "Authorization", "Bearer x")
		if e.o.count() != 3 {
			t.Fatalf("public response not stored: origin saw %d", e.o.count())
		}
	})
}

// TestInterimRelayed: 103 Early Hints from the origin reach the client
// before the final response, and are not stored.
func TestInterimRelayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("Link")
			w.Header().Set("Cache-Control", "max-age=60")
			_, _ = w.Write([]byte("final"))
		})
		client := e.serveEdge()
		var interim []string
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
				interim = append(interim, http.StatusText(code)+": "+h.Get("Link"))
				return nil
			}})
		for range 2 {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://edge.test/assets/o/eh", nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Link") != "" {
				t.Errorf("final %d, Link %q", resp.StatusCode, resp.Header.Get("Link"))
			}
		}
		if want := []string{"Early Hints: </style.css>; rel=preload"}; !slices.Equal(interim, want) {
			t.Errorf("interim responses %q, want %q (once: the hit has none)", interim, want)
		}
		if !strings.Contains(strings.Join(interim, ""), "preload") {
			t.Error("no interim response")
		}
	})
}
