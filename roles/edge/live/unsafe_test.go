package live

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
)

// TestForwardUnsafe: other methods are forwarded once with their body,
// relayed, never stored; a 2xx/3xx invalidates the key and the keys named
// by Location and Content-Location on the same origin (docs/edge.md §7.6).
func TestForwardUnsafe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{origin: func(o *Origin) { o.ForwardUnsafe = true; o.MaxTries = 3 }})
		e.o.set(reply(200, "cached", "Cache-Control", "max-age=600"))
		for _, p := range []string{"/assets/o/item", "/assets/o/other", "/assets/o/third?q=1", "/assets/o/keep"} {
			e.get(p)
		}
		e.o.set(reply(201, "created", "Location", "/other", "Content-Location", "http://"+originHost+"/third?q=1"))
		rec := e.doBody(http.MethodPost, "/assets/o/item", strings.NewReader("payload"), "Content-Type", "text/plain")
		expect(t, rec, 201, "created", "Cache-Status", "ron-edge; fwd=bypass; fwd-status=201", "Location", "/other")
		if m, b := e.o.last().Method, e.o.bodies[len(e.o.bodies)-1]; m != http.MethodPost || b != "payload" {
			t.Fatalf("origin got %s %q", m, b)
		}
		before := e.o.count()
		e.o.set(reply(200, "fresh", "Cache-Control", "max-age=600"))
		for _, p := range []string{"/assets/o/item", "/assets/o/other", "/assets/o/third?q=1"} {
			expect(t, e.get(p), 200, "fresh")
		}
		expect(t, e.get("/assets/o/keep"), 200, "cached")
		if e.o.count() != before+3 {
			t.Errorf("origin saw %d requests, want %d", e.o.count(), before+3)
		}
	})
}

// TestForwardUnsafeFailureKeepsEntries: an error answer invalidates
// nothing, and is not retried.
func TestForwardUnsafeFailureKeepsEntries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{origin: func(o *Origin) { o.ForwardUnsafe = true; o.MaxTries = 3 }})
		e.o.set(reply(200, "cached", "Cache-Control", "max-age=600"))
		e.get("/assets/o/k")
		e.o.set(reply(503, "down"))
		expect(t, e.do(http.MethodDelete, "/assets/o/k"), 503, "down")
		if e.o.count() != 2 {
			t.Fatalf("origin saw %d (retried?)", e.o.count())
		}
		expect(t, e.get("/assets/o/k"), 200, "cached")
	})
}

// TestForwardExtensionMethodAndEncodedBody: extension methods pass, and a
// gzip body goes to the origin as received after the decode guard.
func TestForwardExtensionMethodAndEncodedBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{origin: func(o *Origin) { o.ForwardUnsafe = true }})
		e.o.set(reply(200, "ok"))
		expect(t, e.do("M-SEARCH", "/assets/o/dev"), 200, "ok")
		if e.o.last().Method != "M-SEARCH" {
			t.Errorf("method %q", e.o.last().Method)
		}
		gz := gzipBomb(t, 1000) // 1000 zero bytes: well within the caps
		expect(t, e.doBody(http.MethodPut, "/assets/o/dev", bytes.NewReader(gz), "Content-Encoding", "gzip"), 200, "ok")
		if got := e.o.bodies[len(e.o.bodies)-1]; got != string(gz) || e.o.last().Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("origin got %d bytes, Content-Encoding %q", len(got), e.o.last().Header.Get("Content-Encoding"))
		}
		expect(t, e.do(http.MethodOptions, "/assets/o/dev"), 200, "ok")
		if e.lookups("bypass") != 3 {
			t.Errorf("bypass %v", e.lookups("bypass"))
		}
	})
}
