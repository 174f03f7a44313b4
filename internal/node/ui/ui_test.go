package ui

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metrics"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/ronhq/ron/httpx"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newHandler is an admin-like listener (the shared middleware and error
// envelope) with the page mounted; it is never bound to a port.
func newHandler() http.Handler {
	s := httpx.NewServer(httpx.ServerOptions{
		Role: "admin", Addr: "127.0.0.1:0", Log: zerolog.Nop(), Metrics: metrics.NewSet(),
		Limits: httpx.Limits{MaxInflight: 8, MaxConnsPerIP: 8},
	})
	Mount(s.Echo())
	return s.Echo()
}

func serve(t *testing.T, h http.Handler, method, path string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	req.RemoteAddr = "127.0.0.1:40000"
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestServesEmbeddedFiles(t *testing.T) {
	h := newHandler()
	tests := []struct {
		path, contentType, contains string
	}{
		{"/ui/", "text/html; charset=utf-8", `<script type="module" src="app.js"></script>`},
		{"/ui/index.html", "text/html; charset=utf-8", `<link rel="stylesheet" href="style.css">`},
		{"/ui/app.js", "text/javascript; charset=utf-8", "export function parseProm"},
		{"/ui/style.css", "text/css; charset=utf-8", "@media (max-width: 640px)"},
	}
	for _, tc := range tests {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			t.Run(method+" "+tc.path, func(t *testing.T) {
				rec := serve(t, h, method, tc.path)
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d, want 200 (body %q)", rec.Code, rec.Body)
				}
				checkHeaders(t, rec.Header(), tc.contentType)
				name := strings.TrimPrefix(tc.path, Prefix)
				if want := assets[name].body; rec.Header().Get("Content-Length") != strconv.Itoa(len(want)) {
					t.Errorf("Content-Length %q, want %d", rec.Header().Get("Content-Length"), len(want))
				}
				if method == http.MethodGet && !strings.Contains(rec.Body.String(), tc.contains) {
					t.Errorf("body lacks %q", tc.contains)
				}
			})
		}
	}
}

func checkHeaders(t *testing.T, h http.Header, contentType string) {
	t.Helper()
	want := map[string]string{
		"Content-Type":            contentType,
		"Content-Security-Policy": ContentSecurityPolicy,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
		"Cache-Control":           "no-cache",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Errorf("CSP %q lacks default-src 'self'", h.Get("Content-Security-Policy"))
	}
	if et := h.Get("ETag"); !strings.HasPrefix(et, `"b3:`) || !strings.HasSuffix(et, `"`) {
		t.Errorf("ETag %q is not a strong b3 tag", et)
	}
}

func TestRedirect(t *testing.T) {
	h := newHandler()
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		rec := serve(t, h, method, "/ui")
		if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != Prefix {
			t.Errorf("%s /ui: %d Location %q, want 301 %s", method, rec.Code, rec.Header().Get("Location"), Prefix)
		}
	}
}

func TestConditionalGet(t *testing.T) {
	h := newHandler()
	etag := serve(t, h, http.MethodGet, "/ui/app.js").Header().Get("ETag")
	tests := []struct {
		name, inm string
		status    int
	}{
		{"same tag", etag, http.StatusNotModified},
		{"weak form of the tag", "W/" + etag, http.StatusNotModified},
		{"star", "*", http.StatusNotModified},
		{"in a list", `"other", ` + etag, http.StatusNotModified},
		{"other tag", `"b3:00"`, http.StatusOK},
		{"malformed", `b3:unquoted`, http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(t, h, http.MethodGet, "/ui/app.js", "If-None-Match", tc.inm)
			if rec.Code != tc.status {
				t.Fatalf("If-None-Match %q: status %d, want %d", tc.inm, rec.Code, tc.status)
			}
			if rec.Code == http.StatusNotModified && rec.Body.Len() != 0 {
				t.Errorf("304 with a body of %d bytes", rec.Body.Len())
			}
		})
	}
}

// TestBadPaths: anything under /ui/ that is not one of the files is a 404
// envelope, and other methods are refused.
func TestBadPaths(t *testing.T) {
	h := newHandler()
	tests := []struct {
		method, path string
		status       int
		code         string
	}{
		{http.MethodGet, "/ui/nope.js", http.StatusNotFound, httpx.CodeNotFound},
		{http.MethodGet, "/ui/app.js/", http.StatusNotFound, httpx.CodeNotFound},
		{http.MethodGet, "/ui/sub/app.js", http.StatusNotFound, httpx.CodeNotFound},
		{http.MethodGet, "/ui/../api/v1/status", http.StatusNotFound, httpx.CodeNotFound},
		{http.MethodGet, "/ui/APP.JS", http.StatusNotFound, httpx.CodeNotFound},
		{http.MethodGet, "/ui/index.html%00", http.StatusNotFound, httpx.CodeNotFound},
		{http.MethodPost, "/ui/", http.StatusMethodNotAllowed, httpx.CodeMethodNotAllowed},
		{http.MethodDelete, "/ui/app.js", http.StatusMethodNotAllowed, httpx.CodeMethodNotAllowed},
		{http.MethodPut, "/ui", http.StatusMethodNotAllowed, httpx.CodeMethodNotAllowed},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			rec := serve(t, h, tc.method, tc.path)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d (body %q)", rec.Code, tc.status, rec.Body)
			}
			var env httpx.Envelope
			if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Error == nil || env.Error.Code != tc.code {
				t.Errorf("body %q, want an envelope with code %q (%v)", rec.Body, tc.code, err)
			}
		})
	}
}

// TestPageHasNoInlineScriptOrExternalAsset keeps the page within its own
// Content-Security-Policy: every script and stylesheet is a same-origin
// file, and nothing is loaded from elsewhere.
func TestPageHasNoInlineScriptOrExternalAsset(t *testing.T) {
	html := string(assets["index.html"].body)
	for _, bad := range []string{"<script>", "<style", " style=", " onclick=", " onload=", " onsubmit=", "javascript:", "http://", "https://", "//cdn"} {
		if strings.Contains(strings.ToLower(html), bad) {
			t.Errorf("index.html contains %q", bad)
		}
	}
	for _, name := range []string{"app.js", "style.css"} {
		body := string(assets[name].body)
		for _, bad := range []string{"http://", "https://", "@import", "innerHTML", "eval(", "new Function"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
	}
}
