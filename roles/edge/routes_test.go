package edge

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
)

const someID = "/o/b3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"

// TestRoutesTable: docs/edge.md §1 paths and methods, docs/edge.md §2 nosniff everywhere, docs/edge.md §13's
// absolute-form, CONNECT and TRACE rows.
func TestRoutesTable(t *testing.T) {
	b := newBare(t, nil, fakeHandlers())
	rows := []struct {
		name, method, target string
		code                 int
		errCode, reason      string
		body, allow          string
	}{
		{"object", "GET", someID, 200, "", "", "object GET", ""},
		{"object head", "HEAD", someID, 200, "", "", "", ""},
		{"pack list", "GET", "/packs", 200, "", "", "packs GET", ""},
		{"raw pack", "GET", "/packs/world.pmtiles", 200, "", "", "packs GET", ""},
		{"tile", "GET", "/tiles/world/0/0/0.png", 200, "", "", "tiles GET", ""},
		{"tilejson", "HEAD", "/tiles/world.json", 200, "", "", "", ""},
		{"asset get", "GET", "/assets/o/a/b?q=1", 200, "", "", "assets GET", ""},
		{"asset post", "POST", "/assets/o/x", 200, "", "", "assets POST", ""},
		{"asset options", "OPTIONS", "/assets/o/x", 200, "", "", "assets OPTIONS", ""},
		{"asset extension method", "M-SEARCH", "/assets/o/x", 200, "", "", "assets M-SEARCH", ""},
		{"unknown path", "GET", "/nope", 404, "not_found", "", "", ""},
		{"bare /o", "GET", "/o", 404, "not_found", "", "", ""},
		{"object post", "POST", someID, 405, "method_not_allowed", "", "", "GET"},
		{"tile delete", "DELETE", "/tiles/world/0/0/0.png", 405, "method_not_allowed", "", "", "HEAD"},
		{"packs put", "PUT", "/packs", 405, "method_not_allowed", "", "", "GET"},
		{"connect", "CONNECT", "/o/x", 405, "method_not_allowed", "not_allowed", "", "GET, HEAD"},
		{"trace", "TRACE", "/assets/o/x", 405, "method_not_allowed", "not_allowed", "", "GET, HEAD"},
		{"absolute form", "GET", "http://other.example/", 403, "forbidden", "not_allowed", "", ""},
		{"absolute form on a route", "GET", "http://other.example" + someID, 403, "forbidden", "not_allowed", "", ""},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			a := do(t, b.h, row.method, row.target)
			if a.code != row.code || a.env.Error.Code != row.errCode || a.reason() != row.reason {
				t.Fatalf("%s %s = %d %q reason %q, want %d %q reason %q (%s)", row.method, row.target, a.code,
					a.env.Error.Code, a.reason(), row.code, row.errCode, row.reason, a.body)
			}
			if row.body != "" && a.body != row.body {
				t.Errorf("body %q, want %q", a.body, row.body)
			}
			if row.allow != "" && !strings.Contains(a.header.Get("Allow"), row.allow) {
				t.Errorf("Allow %q, want it to contain %q", a.header.Get("Allow"), row.allow)
			}
			if a.header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("no X-Content-Type-Options: nosniff")
			}
			if a.header.Get("X-Corr-ID") == "" {
				t.Error("no X-Corr-ID")
			}
		})
	}
	if n := counter(b.m, "edge_rejects_total", "reason", ReasonNotAllowed); n != 4 {
		t.Errorf("ron_edge_rejects_total{reason=not_allowed} = %d, want 4", n)
	}
}

// TestCORS (docs/edge.md §2): /o, /packs and /tiles get Access-Control-Allow-Origin and
// the exposed headers for a request with Origin, and answer preflights;
// /assets is left to the origin.
func TestCORS(t *testing.T) {
	anyOrigin := newBare(t, nil, fakeHandlers())
	listed := newBare(t, func(c *Config) { c.CORSOrigins = []string{"https://app.example"} }, fakeHandlers())
	rows := []struct {
		name             string
		b                *bare
		method, target   string
		origin           string
		code             int
		acao, vary       string
		expose, preflght bool
	}{
		{"any: object", anyOrigin, "GET", someID, "https://x.example", 200, "*", "", true, false},
		{"any: no Origin", anyOrigin, "GET", "/packs", "", 200, "", "", false, false},
		{"any: tile keeps its Vary", anyOrigin, "GET", "/tiles/w/0/0/0.png", "https://x.example", 200, "*", "Accept-Encoding", true, false},
		{"any: error answers too", anyOrigin, "POST", "/packs", "https://x.example", 405, "*", "", true, false},
		{"any: assets untouched", anyOrigin, "GET", "/assets/o/x", "https://x.example", 200, "", "", false, false},
		{"listed: echoed", listed, "GET", "/packs/w.pmtiles", "https://app.example", 200, "https://app.example", "Origin", true, false},
		{"listed: tile varies on both", listed, "GET", "/tiles/w/0/0/0.png", "https://app.example", 200, "https://app.example", "Accept-Encoding, Origin", true, false},
		{"listed: other origin", listed, "GET", someID, "https://evil.example", 200, "", "Origin", false, false},
		{"listed: no Origin still varies", listed, "GET", someID, "", 200, "", "Origin", false, false},
		{"any: preflight", anyOrigin, "OPTIONS", "/tiles/w/0/0/0.png", "https://x.example", 204, "*", "", false, true},
		{"listed: preflight", listed, "OPTIONS", someID, "https://app.example", 204, "https://app.example", "Origin", false, true},
		{"listed: preflight of another origin", listed, "OPTIONS", "/packs", "https://evil.example", 204, "", "Origin", false, true},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			var hdr []string
			if row.origin != "" {
				hdr = []string{"Origin", row.origin, "Access-Control-Request-Method", "GET"}
			}
			a := do(t, row.b.h, row.method, row.target, hdr...)
			h := a.header
			if a.code != row.code || h.Get("Access-Control-Allow-Origin") != row.acao || strings.Join(h.Values("Vary"), ", ") != row.vary {
				t.Fatalf("%d ACAO %q Vary %q, want %d %q %q", a.code, h.Get("Access-Control-Allow-Origin"), h.Values("Vary"), row.code, row.acao, row.vary)
			}
			if got := h.Get("Access-Control-Expose-Headers") == corsExposeHeaders; got != row.expose {
				t.Errorf("Expose-Headers %q", h.Get("Access-Control-Expose-Headers"))
			}
			if row.preflght && (h.Get("Access-Control-Allow-Methods") != "GET, HEAD" || h.Get("Access-Control-Max-Age") != "600" ||
				h.Get("Access-Control-Allow-Headers") != corsAllowHeaders || a.body != "") {
				t.Errorf("preflight headers %v body %q", h, a.body)
			}
		})
	}
	if !strings.Contains(corsAllowHeaders, "Request-Timeout") || !strings.Contains(corsExposeHeaders, "Cache-Status") {
		t.Fatal("the CORS header lists lost a field of docs/edge.md §2")
	}
}

// TestRequestTimeoutBad (docs/edge.md §13): Request-Timeout: abc → 400.
func TestRequestTimeoutBad(t *testing.T) {
	b := newBare(t, nil, fakeHandlers())
	if a := do(t, b.h, "GET", someID, "Request-Timeout", "abc"); a.code != 400 || a.env.Error.Code != "bad_request" {
		t.Fatalf("%d %s", a.code, a.body)
	}
	if a := do(t, b.h, "GET", "/tiles/w.json", "Request-Timeout", "1.5"); a.code != 200 {
		t.Fatalf("valid Request-Timeout: %d %s", a.code, a.body)
	}
}

// blockingObject waits for its context and returns its error, or for
// stall after committing the headers when commit is set.
func blockingObject(commit bool, stall time.Duration) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		if !commit {
			<-ctx.Done()
			return ctx.Err()
		}
		c.Response().WriteHeader(http.StatusOK)
		time.Sleep(stall)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		_, err := c.Response().Write([]byte("streamed"))
		return err
	}
}

// TestDeadline (docs/edge.md §2): request_timeout, or a shorter Request-Timeout, bounds
// the time to the first byte (504 timeout, reason timeout); a response
// whose headers went out in time is not cut by it.
func TestDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hs := fakeHandlers()
		hs.object = blockingObject(false, 0)
		hs.tiles = blockingObject(true, time.Minute)
		hs.packs = func(echo.Context) error {
			return httpx.NewError(http.StatusGatewayTimeout, httpx.CodeTimeout, "fill deadline")
		}
		b := newBare(t, nil, hs)
		start := time.Now()
		a := do(t, b.h, "GET", someID)
		if a.code != 504 || a.env.Error.Code != "timeout" || a.reason() != ReasonTimeout || time.Since(start) != 5*time.Second {
			t.Fatalf("blocked handler: %d %s after %s", a.code, a.body, time.Since(start))
		}
		start = time.Now()
		if a = do(t, b.h, "GET", someID, "Request-Timeout", "0.25"); a.code != 504 || time.Since(start) != 250*time.Millisecond {
			t.Fatalf("Request-Timeout 0.25: %d after %s", a.code, time.Since(start))
		}
		if a = do(t, b.h, "GET", "/tiles/w/0/0/0.png"); a.code != 200 || a.body != "streamed" {
			t.Fatalf("committed stream: %d %q", a.code, a.body)
		}
		if a = do(t, b.h, "GET", "/packs"); a.code != 504 || a.reason() != ReasonTimeout {
			t.Fatalf("a building block's 504: %d %s", a.code, a.body)
		}
		if n := counter(b.m, "edge_rejects_total", "reason", ReasonTimeout); n != 3 {
			t.Fatalf("timeouts counted %d, want 3", n)
		}
	})
}

// TestDeadlineVisible: handlers see the client's deadline on their
// context (the work queue drops jobs whose client is gone).
func TestDeadlineVisible(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hs := fakeHandlers()
		var got time.Time
		hs.object = func(c echo.Context) error {
			got, _ = c.Request().Context().Deadline()
			return c.NoContent(http.StatusNoContent)
		}
		b := newBare(t, func(c *Config) { c.RequestTimeout = 2 * time.Second }, hs)
		do(t, b.h, "GET", someID)
		if !got.Equal(time.Now().Add(2 * time.Second)) {
			t.Fatalf("deadline %v, want now+2s", got)
		}
	})
}

// TestRateLimit (docs/edge.md §2): rps > 0 is a listener bucket; over-rate → 429
// rate_limited with reason rate_limit; the ops routes are exempt.
func TestRateLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBare(t, func(c *Config) { c.RPS = 1 }, fakeHandlers())
		if a := do(t, b.h, "GET", "/packs"); a.code != 200 {
			t.Fatalf("first: %d", a.code)
		}
		a := do(t, b.h, "GET", "/packs")
		if a.code != 429 || a.env.Error.Code != "rate_limited" || a.reason() != ReasonRateLimit || a.header.Get("Retry-After") == "" {
			t.Fatalf("over rate: %d %s %v", a.code, a.body, a.header)
		}
		if a := do(t, b.h, "GET", "/healthz"); a.code != 200 {
			t.Fatalf("healthz limited: %d", a.code)
		}
		time.Sleep(time.Second)
		if a := do(t, b.h, "GET", "/packs"); a.code != 200 {
			t.Fatalf("after a second: %d", a.code)
		}
		if n := counter(b.m, "edge_rejects_total", "reason", ReasonRateLimit); n != 1 {
			t.Fatalf("rate_limit counted %d", n)
		}
		off := DefaultConfig()
		off.RPS = 0
		b.r.Server().SetLimits(off.Ingress.Limits()) // a reload turning rps off
		for range 5 {
			if a := do(t, b.h, "GET", "/packs"); a.code != 200 {
				t.Fatalf("rps off: %d", a.code)
			}
		}
	})
}
