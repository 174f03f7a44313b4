package live

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestMissThenHit: a storable 200 is stored on the miss and served from
// the cache while fresh, with Age and Cache-Status; once stale it is
// fetched again.
func TestMissThenHit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(reply(200, "body-1", "Cache-Control", "max-age=60", "Content-Type", "text/plain"))
		expect(t, e.get("/assets/o/a/b?x=1"), 200, "body-1",
			"Cache-Status", "ron-edge; fwd=miss; fwd-status=200; stored", "Age", "0", "Content-Type", "text/plain")
		time.Sleep(10 * time.Second)
		expect(t, e.get("/assets/o/a/b?x=1"), 200, "body-1",
			"Cache-Status", "ron-edge; hit; ttl=50", "Age", "10", "Content-Length", "6")
		if n := e.o.count(); n != 1 {
			t.Fatalf("origin saw %d requests, want 1", n)
		}
		if got := e.o.last().URL.RequestURI(); got != "/a/b?x=1" {
			t.Errorf("origin got %q", got)
		}
		time.Sleep(55 * time.Second)
		e.o.set(reply(200, "body-2", "Cache-Control", "max-age=60"))
		expect(t, e.get("/assets/o/a/b?x=1"), 200, "body-2", "Cache-Status", "ron-edge; fwd=stale; fwd-status=200; stored")
		if e.lookups("hit") != 1 || e.lookups("miss") != 1 || e.lookups("refetched") != 1 {
			t.Errorf("lookups hit %v miss %v refetched %v", e.lookups("hit"), e.lookups("miss"), e.lookups("refetched"))
		}
		if e.fills("stored") != 2 {
			t.Errorf("fills stored = %v", e.fills("stored"))
		}
	})
}

// TestMethodHeadFromStoredGet: HEAD is answered from a stored GET.
func TestHeadFromStoredGet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(reply(200, "abcdef", "Cache-Control", "max-age=60", "ETag", `"v1"`))
		e.get("/assets/o/x")
		expect(t, e.do(http.MethodHead, "/assets/o/x"), 200, "", "Content-Length", "6", "ETag", `"v1"`)
		if e.o.count() != 1 {
			t.Fatalf("origin saw %d requests", e.o.count())
		}
	})
}

// TestAgeFromOrigin: a received Age counts in the current age (docs/edge.md §7.3).
func TestAgeFromOrigin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(reply(200, "x", "Cache-Control", "max-age=60", "Age", "30"))
		expect(t, e.get("/assets/o/age"), 200, "x", "Age", "30")
		time.Sleep(10 * time.Second)
		expect(t, e.get("/assets/o/age"), 200, "x", "Age", "40", "Cache-Status", "ron-edge; hit; ttl=20")
		time.Sleep(21 * time.Second)
		e.get("/assets/o/age")
		if e.o.count() != 2 {
			t.Fatalf("origin saw %d requests, want 2", e.o.count())
		}
	})
}

// TestRevalidation: a stale entry with a validator is revalidated with
// If-None-Match / If-Modified-Since; a 304 updates the stored header and
// the entry is served from the cache.
func TestRevalidation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		lm := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
		e.o.set(reply(200, "stored body", "Cache-Control", "max-age=1", "ETag", `"e1"`, "Last-Modified", lm, "X-Ver", "1"))
		e.get("/assets/o/rv")
		time.Sleep(2 * time.Second)
		e.o.set(reply(304, "", "ETag", `"e1"`, "Cache-Control", "max-age=100", "X-Ver", "2"))
		expect(t, e.get("/assets/o/rv", "If-None-Match", `"other"`, "Range", "bytes=0-3"), 206, "stor",
			"Cache-Status", "ron-edge; fwd=stale; fwd-status=304; stored", "X-Ver", "2", "Content-Range", "bytes 0-3/11")
		req := e.o.last()
		if req.Header.Get("If-None-Match") != `"e1"` || req.Header.Get("If-Modified-Since") != lm || req.Header.Get("Range") != "" {
			t.Errorf("revalidation headers: INM %q IMS %q Range %q", req.Header.Get("If-None-Match"),
				req.Header.Get("If-Modified-Since"), req.Header.Get("Range"))
		}
		expect(t, e.get("/assets/o/rv"), 200, "stored body", "Cache-Status", "ron-edge; hit; ttl=100", "X-Ver", "2")
		if e.lookups("revalidated") != 1 || e.fills("not_modified") != 1 || e.o.count() != 2 {
			t.Errorf("revalidated %v not_modified %v origin %d", e.lookups("revalidated"), e.fills("not_modified"), e.o.count())
		}
	})
}

// TestRevalidationRefetch: a 304 that does not select the entry (no
// validator, or another strong ETag) causes one unconditional refetch.
func TestRevalidationRefetch(t *testing.T) {
	for _, tc := range []struct {
		name string
		hdr  []string
	}{{"no validator", nil}, {"other etag", []string{"ETag", `"e2"`}}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, envConfig{})
				e.o.set(reply(200, "old", "Cache-Control", "max-age=1", "ETag", `"e1"`))
				e.get("/assets/o/rf")
				time.Sleep(2 * time.Second)
				e.o.set(func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("If-None-Match") != "" {
						reply(304, "", tc.hdr...)(w, r)
						return
					}
					reply(200, "new", "Cache-Control", "max-age=60", "ETag", `"e2"`)(w, r)
				})
				expect(t, e.get("/assets/o/rf"), 200, "new", "Cache-Status", "ron-edge; fwd=stale; fwd-status=200; stored")
				if e.o.count() != 3 || e.o.last().Header.Get("If-None-Match") != "" {
					t.Errorf("origin saw %d requests, last If-None-Match %q", e.o.count(), e.o.last().Header.Get("If-None-Match"))
				}
				expect(t, e.get("/assets/o/rf"), 200, "new", "Cache-Status", "ron-edge; hit; ttl=60")
			})
		})
	}
}

// TestResponseNoCacheAlwaysValidated: no-cache entries are stored but
// revalidated on every use, fresh or not.
func TestResponseNoCacheAlwaysValidated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(reply(200, "nc", "Cache-Control", "no-cache, max-age=3600", "ETag", `"n"`))
		e.get("/assets/o/nc")
		e.o.set(reply(304, "", "ETag", `"n"`))
		expect(t, e.get("/assets/o/nc"), 200, "nc", "Cache-Status", "ron-edge; fwd=stale; fwd-status=304; stored")
		if e.o.count() != 2 || e.o.last().Header.Get("If-None-Match") != `"n"` {
			t.Fatalf("origin saw %d requests", e.o.count())
		}
	})
}

// TestStaleWhileRevalidate: within the window the stale entry is served
// at once and one background revalidation refreshes it.
func TestStaleWhileRevalidate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(reply(200, "v1", "Cache-Control", "max-age=1, stale-while-revalidate=60", "ETag", `"a"`))
		e.get("/assets/o/swr")
		time.Sleep(3 * time.Second)
		e.o.set(reply(200, "v2", "Cache-Control", "max-age=100", "ETag", `"b"`))
		expect(t, e.get("/assets/o/swr"), 200, "v1", "Cache-Status", "ron-edge; hit; ttl=-2")
		if e.o.count() != 2 || e.o.last().Header.Get("If-None-Match") != `"a"` {
			t.Fatalf("background revalidation: origin saw %d requests", e.o.count())
		}
		expect(t, e.get("/assets/o/swr"), 200, "v2", "Cache-Status", "ron-edge; hit; ttl=100")
		if e.lookups("stale_served") != 1 || e.metric(`ron_tasks_spawned_total{role="edge",kind="revalidate"}`) != 1 {
			t.Errorf("stale_served %v", e.lookups("stale_served"))
		}
		// Past the window: validated before answering.
		time.Sleep(200 * time.Second)
		e.o.set(reply(200, "v3", "Cache-Control", "max-age=100"))
		expect(t, e.get("/assets/o/swr"), 200, "v3")
	})
}

// TestStaleOnFailure: stale-if-error on 500/502/503/504,
// stale_if_unreachable when the origin cannot be reached, never with
// must-revalidate.
func TestStaleOnFailure(t *testing.T) {
	tests := []struct {
		name        string
		cc          string
		unreachable bool
		status      int
		wantStatus  int
		wantBody    string
	}{
		{"stale-if-error 503", "max-age=1, stale-if-error=60", false, 503, 200, "v1"},
		{"stale-if-error 500", "max-age=1, stale-if-error=60", false, 500, 200, "v1"},
		{"no stale-if-error 503", "max-age=1", false, 503, 503, "down"},
		{"stale-if-error 404", "max-age=1, stale-if-error=60", false, 404, 404, "down"},
		{"unreachable", "max-age=1", true, 0, 200, "v1"},
		{"unreachable must-revalidate", "max-age=1, must-revalidate", true, 0, 502, "*"},
		{"unreachable s-maxage", "s-maxage=1", true, 0, 502, "*"},
		{"stale-if-error past window", "max-age=1, stale-if-error=1", false, 503, 503, "down"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, envConfig{})
				e.o.set(reply(200, "v1", "Cache-Control", tc.cc, "ETag", `"x"`))
				e.get("/assets/o/s")
				time.Sleep(3 * time.Second)
				if tc.unreachable {
					e.ln.SetRefuse(true)
					e.ln.DropAll()
				} else {
					e.o.set(reply(tc.status, "down"))
				}
				rec := e.get("/assets/o/s")
				expect(t, rec, tc.wantStatus, tc.wantBody)
				if tc.wantStatus == 200 && e.lookups("stale_served") != 1 {
					t.Errorf("stale_served %v", e.lookups("stale_served"))
				}
			})
		})
	}
}

// TestStaleIfUnreachableWindow: past stale_if_unreachable the failure is
// the answer.
func TestStaleIfUnreachableWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{settings: func(s *Settings) { s.StaleIfUnreachable = 10 * time.Second }})
		e.o.set(reply(200, "v1", "Cache-Control", "max-age=1"))
		e.get("/assets/o/w")
		e.ln.SetRefuse(true)
		e.ln.DropAll()
		time.Sleep(5 * time.Second)
		expect(t, e.get("/assets/o/w"), 200, "v1")
		time.Sleep(10 * time.Second)
		rec := e.get("/assets/o/w")
		if code, _ := errorCode(t, rec); rec.Code != 502 || code != "upstream_unavailable" {
			t.Fatalf("%d %s", rec.Code, code)
		}
	})
}

// TestOnlyIfCached: 504 without a usable stored response, else served.
func TestOnlyIfCached(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		rec := e.get("/assets/o/oic", "Cache-Control", "only-if-cached")
		if code, _ := errorCode(t, rec); rec.Code != 504 || code != "timeout" || e.o.count() != 0 {
			t.Fatalf("%d %s, origin %d", rec.Code, code, e.o.count())
		}
		if cs := rec.Header().Get("Cache-Status"); cs != "ron-edge; fwd=miss; detail=timeout" {
			t.Errorf("Cache-Status %q", cs)
		}
		e.o.set(reply(200, "v", "Cache-Control", "max-age=60"))
		e.get("/assets/o/oic")
		expect(t, e.get("/assets/o/oic", "Cache-Control", "only-if-cached"), 200, "v")
	})
}

// TestRequestDirectives: no-cache revalidates, max-age=0 revalidates,
// no-store keeps the answer out of the cache; with
// honor_request_cache_control = false they are ignored.
func TestRequestDirectives(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(reply(200, "v", "Cache-Control", "max-age=600", "ETag", `"t"`))
		e.get("/assets/o/rd")
		e.o.set(reply(304, "", "ETag", `"t"`))
		expect(t, e.get("/assets/o/rd", "Cache-Control", "no-cache"), 200, "v", "Cache-Status", "ron-edge; fwd=request; fwd-status=304; stored")
		expect(t, e.get("/assets/o/rd", "Pragma", "no-cache"), 200, "v", "Cache-Status", "ron-edge; fwd=request; fwd-status=304; stored")
		if e.o.count() != 3 {
			t.Fatalf("origin saw %d", e.o.count())
		}
		e.o.set(reply(200, "ns", "Cache-Control", "max-age=600"))
		e.get("/assets/o/ns", "Cache-Control", "no-store")
		e.get("/assets/o/ns")
		if e.o.count() != 5 {
			t.Fatalf("no-store response was stored: origin saw %d", e.o.count())
		}
	})
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{origin: func(o *Origin) { o.HonorRequestCacheControl = false }})
		e.o.set(reply(200, "v", "Cache-Control", "max-age=600"))
		e.get("/assets/o/rd")
		expect(t, e.get("/assets/o/rd", "Cache-Control", "no-cache"), 200, "v", "Cache-Status", "ron-edge; hit; ttl=600")
	})
}

// TestNotStored: private, no-store, Vary: * and uncacheable statuses are
// relayed and not stored.
func TestNotStored(t *testing.T) {
	for _, hdr := range [][]string{
		{"Cache-Control", "private, max-age=60"},
		{"Cache-Control", "no-store, max-age=60"},
		{"Cache-Control", "max-age=60", "Vary", "*"},
		{},
	} {
		synctest.Test(t, func(t *testing.T) {
			e := newEnv(t, envConfig{})
			status := 200
			if len(hdr) == 0 {
				status = 201 // not heuristically cacheable, no freshness
			}
			e.o.set(reply(status, "p", hdr...))
			expect(t, e.get("/assets/o/p"), status, "p", "Cache-Status", "ron-edge; fwd=miss; fwd-status="+strconv.Itoa(status))
			e.get("/assets/o/p")
			if e.o.count() != 2 || e.fills("passed") != 2 {
				t.Errorf("%v: origin saw %d, passed %v", hdr, e.o.count(), e.fills("passed"))
			}
		})
	}
}

// TestRangeFromStored: Range and conditionals on a stored 200 go through
// the helpers (docs/edge.md §2, docs/edge.md §7.4).
func TestRangeFromStored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(reply(200, "0123456789", "Cache-Control", "max-age=600", "ETag", `"r"`, "Content-Type", "text/plain"))
		e.get("/assets/o/rg")
		expect(t, e.get("/assets/o/rg", "Range", "bytes=2-4"), 206, "234", "Content-Range", "bytes 2-4/10", "Accept-Ranges", "bytes")
		expect(t, e.get("/assets/o/rg", "Range", "bytes=-3"), 206, "789")
		rec := e.get("/assets/o/rg", "Range", "bytes=0-0,5-5")
		if rec.Code != 206 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "multipart/byteranges") {
			t.Fatalf("multipart: %d %q", rec.Code, rec.Header().Get("Content-Type"))
		}
		rec = e.get("/assets/o/rg", "Range", "bytes=20-")
		expect(t, rec, 416, "*", "Content-Range", "bytes */10")
		if _, reason := errorCode(t, rec); reason != reasonInvalidRange || e.rejects(reasonInvalidRange) != 1 {
			t.Errorf("416 reason %q", reason)
		}
		expect(t, e.get("/assets/o/rg", "Range", "bytes=2-4", "If-Range", `"r"`), 206, "234")
		expect(t, e.get("/assets/o/rg", "Range", "bytes=2-4", "If-Range", `"old"`), 200, "0123456789")
		expect(t, e.get("/assets/o/rg", "If-None-Match", `W/"r"`), 304, "", "ETag", `"r"`, "Cache-Control", "max-age=600")
		expect(t, e.do(http.MethodHead, "/assets/o/rg", "Range", "bytes=2-4"), 200, "", "Content-Length", "10")
		if e.o.count() != 1 {
			t.Errorf("origin saw %d", e.o.count())
		}
		if e.metric(`ron_edge_range_requests_total{role="edge",result="206"}`) != 4 {
			t.Errorf("range 206 = %v", e.metric(`ron_edge_range_requests_total{role="edge",result="206"}`))
		}
	})
}

// TestIfRangeDate: an If-Range date equal to a strong Last-Modified (Date
// ≥ Last-Modified + 1 s) allows the Range.
func TestIfRangeDate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		lm := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
		e.o.set(reply(200, "0123456789", "Cache-Control", "max-age=600", "Last-Modified", lm))
		e.get("/assets/o/ird")
		expect(t, e.get("/assets/o/ird", "Range", "bytes=0-1", "If-Range", lm), 206, "01")
		expect(t, e.get("/assets/o/ird", "If-Modified-Since", lm), 304, "")
	})
}

// TestRangeOnMiss: the client's Range is forwarded; a 206 is relayed and
// not stored, a 200 is stored and the range cut from it.
func TestRangeOnMiss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(reply(206, "23", "Content-Range", "bytes 2-3/10", "Cache-Control", "max-age=600"))
		expect(t, e.get("/assets/o/rm", "Range", "bytes=2-3"), 206, "23", "Content-Range", "bytes 2-3/10")
		if e.o.last().Header.Get("Range") != "bytes=2-3" {
			t.Errorf("Range not forwarded")
		}
		e.o.set(reply(200, "0123456789", "Cache-Control", "max-age=600"))
		expect(t, e.get("/assets/o/rm", "Range", "bytes=4-5"), 206, "45", "Cache-Status", "ron-edge; fwd=miss; fwd-status=200; stored")
		expect(t, e.get("/assets/o/rm"), 200, "0123456789", "Cache-Status", "ron-edge; hit; ttl=600")
		if e.o.count() != 2 {
			t.Errorf("origin saw %d", e.o.count())
		}
	})
}

// TestConditionalOnMiss: client conditionals are forwarded unchanged and
// an origin 304 is relayed, nothing stored.
func TestConditionalOnMiss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(reply(304, "", "ETag", `"c"`, "Cache-Control", "max-age=600"))
		expect(t, e.get("/assets/o/cm", "If-None-Match", `"c"`), 304, "", "ETag", `"c"`,
			"Cache-Status", "ron-edge; fwd=miss; fwd-status=304")
		if e.o.last().Header.Get("If-None-Match") != `"c"` {
			t.Errorf("conditional not forwarded")
		}
		e.o.set(reply(200, "full", "ETag", `"c"`, "Cache-Control", "max-age=600"))
		expect(t, e.get("/assets/o/cm"), 200, "full", "Cache-Status", "ron-edge; fwd=miss; fwd-status=200; stored")
	})
}

// TestOriginOnlyPreconditions: If-Match and If-Unmodified-Since are
// forwarded as on a miss, never evaluated against the entry.
func TestOriginOnlyPreconditions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(reply(200, "v", "Cache-Control", "max-age=600", "ETag", `"m"`))
		e.get("/assets/o/im")
		e.o.set(reply(412, "failed"))
		expect(t, e.get("/assets/o/im", "If-Match", `"other"`), 412, "failed", "Cache-Status", "ron-edge; fwd=request; fwd-status=412")
		e.o.set(reply(200, "v", "Cache-Control", "max-age=600", "ETag", `"m"`))
		expect(t, e.get("/assets/o/im", "If-Unmodified-Since", "Sat, 01 Jan 2000 00:00:00 GMT"), 200, "v")
		if e.o.count() != 3 || e.lookups("bypass") != 2 {
			t.Errorf("origin saw %d, bypass %v", e.o.count(), e.lookups("bypass"))
		}
	})
}

// TestVaryVariants: one stored variant per Vary-selected value.
func TestVaryVariants(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(func(w http.ResponseWriter, r *http.Request) {
			reply(200, "lang="+r.Header.Get("Accept-Language"), "Cache-Control", "max-age=600", "Vary", "Accept-Language")(w, r)
		})
		expect(t, e.get("/assets/o/v", "Accept-Language", "en"), 200, "lang=en")
		expect(t, e.get("/assets/o/v", "Accept-Language", "fr"), 200, "lang=fr")
		expect(t, e.get("/assets/o/v", "Accept-Language", "en"), 200, "lang=en", "Cache-Status", "ron-edge; hit; ttl=600")
		expect(t, e.get("/assets/o/v", "Accept-Language", "fr"), 200, "lang=fr", "Cache-Status", "ron-edge; hit; ttl=600")
		expect(t, e.get("/assets/o/v"), 200, "lang=")
		if e.o.count() != 3 {
			t.Errorf("origin saw %d", e.o.count())
		}
	})
}

// TestHeadMiss: HEAD on a miss is forwarded as HEAD and not stored; a 200
// freshens the stored entry it matches (and answers from it) or marks a
// mismatching one stale.
func TestHeadMiss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(reply(200, "body", "Cache-Control", "max-age=600"))
		expect(t, e.do(http.MethodHead, "/assets/o/h"), 200, "", "Cache-Status", "ron-edge; fwd=miss; fwd-status=200")
		if e.o.last().Method != http.MethodHead {
			t.Fatalf("forwarded as %s", e.o.last().Method)
		}
		e.get("/assets/o/h")
		if e.o.count() != 2 {
			t.Fatalf("HEAD response was stored")
		}
		// A stale entry: HEAD revalidates it and freshens it.
		e.o.set(reply(200, "abc", "Cache-Control", "max-age=1", "ETag", `"h1"`, "X-A", "1"))
		e.get("/assets/o/h2")
		time.Sleep(2 * time.Second)
		e.o.set(reply(200, "", "Cache-Control", "max-age=600", "ETag", `"h1"`, "Content-Length", "3"))
		expect(t, e.do(http.MethodHead, "/assets/o/h2"), 200, "", "X-A", "1", "Content-Length", "3",
			"Cache-Status", "ron-edge; fwd=stale; fwd-status=200; stored")
		expect(t, e.get("/assets/o/h2"), 200, "abc", "Cache-Status", "ron-edge; hit; ttl=600")
		// A HEAD whose ETag differs makes the entry stale.
		e.o.set(reply(200, "", "Cache-Control", "max-age=600", "ETag", `"h2"`))
		e.do(http.MethodHead, "/assets/o/h2", "Cache-Control", "no-cache")
		e.o.set(reply(200, "new", "Cache-Control", "max-age=600", "ETag", `"h2"`))
		expect(t, e.get("/assets/o/h2"), 200, "new")
	})
}

// TestStoredStatuses: empty bodies and other cacheable statuses are
// stored and served as they came.
func TestStoredStatuses(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
	}{{204, ""}, {200, ""}, {404, "not here"}, {301, "moved"}, {410, "gone"}} {
		synctest.Test(t, func(t *testing.T) {
			e := newEnv(t, envConfig{})
			e.o.set(reply(tc.status, tc.body, "Cache-Control", "max-age=60"))
			e.get("/assets/o/st")
			rec := e.get("/assets/o/st")
			expect(t, rec, tc.status, tc.body, "Cache-Status", "ron-edge; hit; ttl=60")
			if tc.status == 204 && rec.Header().Get("Content-Length") != "" {
				t.Errorf("204 with Content-Length %q", rec.Header().Get("Content-Length"))
			}
			if e.o.count() != 1 {
				t.Errorf("%d: origin saw %d", tc.status, e.o.count())
			}
			expect(t, e.do(http.MethodHead, "/assets/o/st"), tc.status, "")
		})
	}
}
