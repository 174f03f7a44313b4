package live

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"testing/synctest"

	"github.com/ronhq/ron/httpx"
)

func TestParseOrigin(t *testing.T) {
	tests := []struct {
		name, url string
		insecure  bool
		want      string // "" = error
	}{
		{"cdn", "https://cdn.example.com", false, "https://cdn.example.com"},
		{"cdn", "HTTPS://cdn.example.com/assets/", false, "https://cdn.example.com/assets"},
		{"a-b_c9", "https://cdn.example.com:8443/p/q", false, "https://cdn.example.com:8443/p/q"},
		{"lo", "http://127.0.0.1:18000", true, "http://127.0.0.1:18000"},
		{"lo", "http://127.9.9.9", true, "http://127.9.9.9"},
		{"lo", "http://[::1]:8080/x", true, "http://[::1]:8080/x"},
		{"lo", "http://localhost:8080", true, "http://localhost:8080"},
		{"lo", "http://127.0.0.1:18000", false, ""},
		{"lo", "http://example.com", true, ""},
		{"lo", "http://10.0.0.1", true, ""},
		{"x", "https://user:pw@cdn.example.com", false, ""},
		{"x", "https://cdn.example.com/?a=1", false, ""},
		{"x", "https://cdn.example.com/?", false, ""},
		{"x", "https://cdn.example.com/#frag", false, ""},
		{"x", "ftp://cdn.example.com", false, ""},
		{"x", "https://", false, ""},
		{"x", "cdn.example.com/path", false, ""},
		{"x", "https://cdn.exa mple.com", false, ""},
		{"Upper", "https://cdn.example.com", false, ""},
		{"-dash", "https://cdn.example.com", false, ""},
		{"", "https://cdn.example.com", false, ""},
		{"a.b", "https://cdn.example.com", false, ""},
	}
	for _, tc := range tests {
		u, err := ParseOrigin(tc.name, tc.url, tc.insecure)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("ParseOrigin(%q, %q, %v) = %v, want an error", tc.name, tc.url, tc.insecure, u)
		case tc.want != "" && err != nil:
			t.Errorf("ParseOrigin(%q, %q, %v): %v", tc.name, tc.url, tc.insecure, err)
		case tc.want != "" && u.String() != tc.want:
			t.Errorf("ParseOrigin(%q, %q) = %q, want %q", tc.name, tc.url, u, tc.want)
		}
	}
}

func TestParseTarget(t *testing.T) {
	base, _ := url.Parse("https://cdn.example.com/pre")
	origins := map[string]Origin{"o": {Name: "o", URL: base}}
	tests := []struct {
		target   string
		status   int    // 0 = ok
		send     string // the request-target sent upstream
		key      string
		wantCode string
	}{
		{target: "/assets/o/a/b.png", send: "/pre/a/b.png", key: "o/a/b.png?"},
		{target: "/assets/o/a%2Fb/c%20d?q=%41&x", send: "/pre/a%2Fb/c%20d?q=%41&x", key: "o/a%2Fb/c%20d?q=%41&x"},
		{target: "/assets/o/x?", send: "/pre/x?", key: "o/x?"},
		{target: "/assets/o/", send: "/pre/", key: "o/?"},
		{target: "/assets/o", send: "/pre/", key: "o/?"},
		{target: "/assets/o/a//b", send: "/pre/a//b", key: "o/a//b?"},
		{target: "/assets/o/.../x/.a", send: "/pre/.../x/.a", key: "o/.../x/.a?"},
		{target: "/assets/o/a/{x}|", send: "/pre/a/{x}|", key: "o/a/{x}|?"},
		{target: "/assets/unknown/x", status: 404, wantCode: httpx.CodeNotFound},
		{target: "/assets/o/a/../b", status: 400, wantCode: httpx.CodeBadRequest},
		{target: "/assets/o/a/./b", status: 400, wantCode: httpx.CodeBadRequest},
		{target: "/assets/o/..", status: 400, wantCode: httpx.CodeBadRequest},
		{target: "/assets/o/a/%2e%2e/b", status: 400, wantCode: httpx.CodeBadRequest},
		{target: "/assets/o/a/%2E%2e", status: 400, wantCode: httpx.CodeBadRequest},
		{target: "/assets/o/.%2E/b", status: 400, wantCode: httpx.CodeBadRequest},
		{target: "/assets/o/%2e/b", status: 400, wantCode: httpx.CodeBadRequest},
		{target: "/other/o/x", status: 404, wantCode: httpx.CodeNotFound},
	}
	for _, tc := range tests {
		r := httptest.NewRequest(http.MethodGet, "http://edge.test/", nil)
		r.RequestURI = tc.target
		tg, err := parseTarget(r, origins)
		if tc.status != 0 {
			he, ok := err.(*httpx.Error)
			if !ok || he.Status != tc.status || he.Code != tc.wantCode {
				t.Errorf("%s: err %v, want %d %s", tc.target, err, tc.status, tc.wantCode)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.target, err)
			continue
		}
		if got := tg.send.RequestURI(); got != tc.send || tg.send.Host != "cdn.example.com" {
			t.Errorf("%s: sends %q to %q, want %q", tc.target, got, tg.send.Host, tc.send)
		}
		if tg.key != tc.key {
			t.Errorf("%s: key %q, want %q", tc.target, tg.key, tc.key)
		}
	}
}

// TestTargetBytesOnTheWire: the origin receives {prefix}/{rest}?{q} with
// the escapes as the client sent them.
func TestTargetBytesOnTheWire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{origin: func(o *Origin) { o.URL, _ = url.Parse("http://" + originHost + "/pre") }})
		for _, tc := range []struct{ path, want string }{
			{"/assets/o/a%2Fb/%7Ex%20y?q=%41+b&&c", "/pre/a%2Fb/%7Ex%20y?q=%41+b&&c"},
			{"/assets/o//double", "/pre//double"},
			{"/assets/o/x?", "/pre/x?"},
		} {
			e.get(tc.path)
			if got := e.o.last().RequestURI; got != tc.want {
				t.Errorf("%s reached the origin as %q, want %q", tc.path, got, tc.want)
			}
			if h := e.o.last().Host; h != originHost {
				t.Errorf("Host %q", h)
			}
		}
	})
}

// TestOriginClient: the built client has compression off, no proxy and
// follows no redirects; a given client is made to follow none either.
func TestOriginClient(t *testing.T) {
	c := originClient(nil)
	tr, ok := c.Transport.(*http.Transport)
	if !ok || !tr.DisableCompression || tr.Proxy != nil || tr.TLSClientConfig != nil {
		t.Fatalf("transport %+v", c.Transport)
	}
	given := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
	for _, cl := range []*http.Client{c, originClient(given)} {
		if err := cl.CheckRedirect(nil, nil); err != http.ErrUseLastResponse {
			t.Errorf("CheckRedirect = %v", err)
		}
	}
	if given.CheckRedirect(nil, nil) != nil {
		t.Error("the given client was modified")
	}
	c.CloseIdleConnections()
}
