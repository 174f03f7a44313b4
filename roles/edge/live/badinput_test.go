package live

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
)

// TestBadInput covers the /assets rows of docs/edge.md §13 that end at the
// edge.
func TestBadInput(t *testing.T) {
	bomb := gzipBomb(t, 20<<20)
	tests := []struct {
		name           string
		forwardUnsafe  bool
		method, path   string
		body           []byte
		hdr            []string
		status         int
		code, reason   string
		allow          string
		originRequests int
	}{
		{name: "unknown origin", method: "GET", path: "/assets/unknown/x", status: 404, code: httpx.CodeNotFound, reason: reasonNotAllowed},
		{name: "dot-dot", method: "GET", path: "/assets/o/a/../b", status: 400, code: httpx.CodeBadRequest},
		{name: "encoded dot-dot", method: "GET", path: "/assets/o/a/%2e%2e/b", status: 400, code: httpx.CodeBadRequest},
		{name: "encoded dot-dot upper", method: "GET", path: "/assets/o/%2E%2E", status: 400, code: httpx.CodeBadRequest},
		{name: "POST without forward_unsafe", method: "POST", path: "/assets/o/x", body: []byte("a=1"), status: 405,
			code: httpx.CodeMethodNotAllowed, allow: "GET, HEAD"},
		{name: "DELETE without forward_unsafe", method: "DELETE", path: "/assets/o/x", status: 405,
			code: httpx.CodeMethodNotAllowed, allow: "GET, HEAD"},
		{name: "body over body_max_bytes", forwardUnsafe: true, method: "POST", path: "/assets/o/x",
			body: bytes.Repeat([]byte("a"), 64<<10+1), status: 413, code: httpx.CodePayloadTooLarge, reason: reasonBodyCap},
		{name: "gzip bomb", forwardUnsafe: true, method: "POST", path: "/assets/o/x", body: bomb,
			hdr: []string{"Content-Encoding", "gzip"}, status: 413, code: httpx.CodeDecodedCap, reason: reasonDecompressCap},
		{name: "corrupt gzip", forwardUnsafe: true, method: "POST", path: "/assets/o/x", body: []byte("not gzip"),
			hdr: []string{"Content-Encoding", "gzip"}, status: 400, code: httpx.CodeMalformed},
		{name: "unknown coding", forwardUnsafe: true, method: "PUT", path: "/assets/o/x", body: []byte("x"),
			hdr: []string{"Content-Encoding", "zstd"}, status: 415, code: httpx.CodeUnsupportedMedia},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, envConfig{
					origin:   func(o *Origin) { o.ForwardUnsafe = tc.forwardUnsafe },
					settings: func(s *Settings) { s.BodyMaxBytes = 64 << 10 },
				})
				rec := e.doBody(tc.method, tc.path, bytes.NewReader(tc.body), tc.hdr...)
				if rec.Code != tc.status {
					t.Fatalf("status %d, want %d (%s)", rec.Code, tc.status, rec.Body)
				}
				code, reason := errorCode(t, rec)
				if code != tc.code || reason != tc.reason {
					t.Errorf("code %q reason %q, want %q %q", code, reason, tc.code, tc.reason)
				}
				if got := rec.Header().Get("Allow"); got != tc.allow {
					t.Errorf("Allow %q, want %q", got, tc.allow)
				}
				if tc.reason != "" && e.rejects(tc.reason) != 1 {
					t.Errorf("ron_edge_rejects_total{reason=%q} = %v", tc.reason, e.rejects(tc.reason))
				}
				if n := e.o.count(); n != tc.originRequests {
					t.Errorf("origin saw %d requests", n)
				}
			})
		})
	}
}

// gzipBomb compresses n zero bytes.
func gzipBomb(t *testing.T, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestUnquotedETagStoredWithoutValidator: docs/edge.md §13 "Origin ETag: abc
// (unquoted)" → stored, counted as etag_invalid, and never used to
// revalidate.
func TestUnquotedETagStoredWithoutValidator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(reply(200, "v1", "ETag", "abc", "Cache-Control", "max-age=10"))
		expect(t, e.get("/assets/o/e"), 200, "v1", "Cache-Status", "ron-edge; fwd=miss; fwd-status=200; stored", "ETag", "abc")
		if e.rejects(reasonEtagInvalid) != 1 {
			t.Errorf("etag_invalid = %v", e.rejects(reasonEtagInvalid))
		}
		expect(t, e.get("/assets/o/e", "If-None-Match", "abc"), 200, "v1", "Cache-Status", "ron-edge; hit; ttl=10")
		time.Sleep(11 * time.Second)
		e.get("/assets/o/e")
		if inm := e.o.last().Header.Get("If-None-Match"); inm != "" {
			t.Errorf("revalidation used the invalid ETag: If-None-Match %q", inm)
		}
	})
}

// TestRedirectRelayedNotFollowed: docs/edge.md §13 "Origin 302 to another host" →
// relayed to the client, never followed.
func TestRedirectRelayedNotFollowed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(reply(302, "moved", "Location", "https://other.example/elsewhere"))
		rec := e.get("/assets/o/r")
		expect(t, rec, 302, "moved", "Location", "https://other.example/elsewhere",
			"Cache-Status", "ron-edge; fwd=miss; fwd-status=302")
		if e.o.count() != 1 {
			t.Errorf("origin saw %d requests", e.o.count())
		}
		// A 302 with explicit freshness is cached like any other response.
		e.o.set(reply(302, "", "Location", "/assets/o/new", "Cache-Control", "max-age=60"))
		e.get("/assets/o/r2")
		expect(t, e.get("/assets/o/r2"), 302, "", "Cache-Status", "ron-edge; hit; ttl=60", "Location", "/assets/o/new")
		if !strings.Contains(e.o.last().URL.Path, "r2") || e.o.count() != 2 {
			t.Errorf("origin saw %d requests, last %s", e.o.count(), e.o.last().URL)
		}
	})
}

// TestDrainingQueue: a closed work queue answers 503 draining.
func TestDrainingQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.q.Close()
		rec := e.get("/assets/o/d")
		if code, _ := errorCode(t, rec); rec.Code != http.StatusServiceUnavailable || code != httpx.CodeDraining {
			t.Fatalf("%d %s", rec.Code, code)
		}
	})
}
