package objects

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/store"
)

// TestBadIDs: anything but ^b3:[0-9a-f]{64}$ is a 400 bad_request, and no
// source is asked.
func TestBadIDs(t *testing.T) {
	n := memNet{}
	s := newFakeStore()
	n["storage.test"] = s
	e := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})
	hex := strings.Repeat("ab", 32)
	for _, bad := range []string{
		"xyz", "b3:", "b3:" + hex[:63], "b3:" + hex + "0", "B3:" + hex, "b3:" + strings.ToUpper(hex),
		"sha256:" + hex, hex, "b3:" + hex[:62] + "zz", "b3:%20" + hex[:61],
	} {
		t.Run(bad, func(t *testing.T) {
			r := e.get(t.Context(), http.MethodGet, bad)
			if r.status != http.StatusBadRequest || errCode(r) != "bad_request" {
				t.Fatalf("GET /o/%s: %d %s, want 400 bad_request", bad, r.status, r.body)
			}
		})
	}
	if len(s.requests()) != 0 {
		t.Fatalf("storage saw %d requests for bad ids", len(s.requests()))
	}
}

// errCode is the envelope's code of r.
func errCode(r result) string {
	var env struct {
		Error struct {
			Code    string         `json:"code"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.body, &env)
	return env.Error.Code
}

// errReason is the envelope's details.reason of r.
func errReason(r result) string {
	var env struct {
		Error struct {
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.body, &env)
	s, _ := env.Error.Details["reason"].(string)
	return s
}

// TestMissThenHit: a miss fills from storage (the source's Content-Type
// recorded, stored), the next GET is a hit with the immutable headers; HEAD
// hits too.
func TestMissThenHit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(1, 3*cs+100)
		n, s := storageHolding(id, honestObj(data))
		e := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})

		r := e.get(t.Context(), http.MethodGet, id.String())
		wantBody(t, "miss", r, data)
		synctest.Wait() // the fill committed
		wantHeaders(t, "miss", r, id, "text/plain; charset=utf-8", "ron-edge; fwd=miss; fwd-status=200; stored")
		r = e.get(t.Context(), http.MethodGet, id.String())
		wantBody(t, "hit", r, data)
		wantHeaders(t, "hit", r, id, "text/plain; charset=utf-8", "ron-edge; hit")
		r = e.get(t.Context(), http.MethodHead, id.String())
		if r.status != http.StatusOK || len(r.body) != 0 || r.header.Get("Content-Length") != "196708" {
			t.Fatalf("HEAD hit: %d, %d bytes, Content-Length %q", r.status, len(r.body), r.header.Get("Content-Length"))
		}
		if got := s.gets.Load(); got != 1 {
			t.Fatalf("storage saw %d body GETs, want 1", got)
		}
		for _, req := range s.requests() {
			if req.Header.Get("Authorization") != "Bearer storage-token" {
				t.Fatalf("storage request without the source's Authorization: %v", req.Header)
			}
		}
		for series, want := range map[[2]string]float64{
			{"edge_cache_lookups_total", "hit"}: 2, {"edge_cache_lookups_total", "miss"}: 1,
			{"edge_fills_total", "stored"}: 1,
		} {
			labels := []string{"route", Route, "result", series[1]}
			if series[0] == "edge_fills_total" {
				labels = []string{"result", series[1], "source", "storage"}
			}
			if got := e.metric(series[0], labels...); got != want {
				t.Errorf("%s{%s} = %v, want %v", series[0], series[1], got, want)
			}
		}
		if got := e.metric("edge_bytes_served_total", "route", Route); got != float64(2*len(data)) {
			t.Errorf("bytes served %v, want %d", got, 2*len(data))
		}
		if got := e.metric("edge_upstream_bytes_total", "source", "storage"); got != float64(len(data)) {
			t.Errorf("upstream bytes %v, want %d", got, len(data))
		}
	})
}

// wantHeaders checks the headers of an object answer.
func wantHeaders(t *testing.T, what string, r result, id store.ID, ctype, cacheStatus string) {
	t.Helper()
	for k, want := range map[string]string{
		"ETag": `"` + id.String() + `"`, "Cache-Control": "public, max-age=31536000, immutable",
		"Accept-Ranges": "bytes", "Content-Type": ctype, "Cache-Status": cacheStatus,
	} {
		if got := r.header.Get(k); got != want {
			t.Errorf("%s: %s = %q, want %q", what, k, got, want)
		}
	}
}

// TestConditionalsAtOnce: If-None-Match naming the object (weak or strong,
// in a list) is a 304 without asking anyone; an If-Match naming other
// objects a 412; "*" alone waits for the object to exist.
func TestConditionalsAtOnce(t *testing.T) {
	n := memNet{}
	s := newFakeStore()
	n["storage.test"] = s
	e := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})
	_, id := pattern(2, 10)
	tag := `"` + id.String() + `"`
	for _, row := range []struct {
		hdr    []string
		status int
	}{
		{[]string{"If-None-Match", tag}, http.StatusNotModified},
		{[]string{"If-None-Match", "W/" + tag}, http.StatusNotModified},
		{[]string{"If-None-Match", `"b3:other", ` + tag}, http.StatusNotModified},
		{[]string{"If-Match", `"b3:other"`}, http.StatusPreconditionFailed},
		{[]string{"If-None-Match", "*"}, http.StatusNotFound},
		{[]string{"If-None-Match", `"b3:other"`}, http.StatusNotFound},
	} {
		before := len(s.requests())
		r := e.get(t.Context(), http.MethodGet, id.String(), row.hdr...)
		if r.status != row.status {
			t.Errorf("%v: %d %s, want %d", row.hdr, r.status, r.body, row.status)
		}
		asked := len(s.requests()) > before
		if asked != (row.status == http.StatusNotFound) {
			t.Errorf("%v: storage asked %v", row.hdr, asked)
		}
		if row.status == http.StatusNotModified && r.header.Get("ETag") != tag {
			t.Errorf("%v: 304 with ETag %q", row.hdr, r.header.Get("ETag"))
		}
	}
}

// TestNotFound: with no source a miss is 404; so it is when every source
// answers 404.
func TestNotFound(t *testing.T) {
	_, id := pattern(3, 10)
	t.Run("no source", func(t *testing.T) {
		e := newEnv(t, envOptions{})
		if r := e.get(t.Context(), http.MethodGet, id.String()); r.status != http.StatusNotFound || errCode(r) != "not_found" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("every source 404", func(t *testing.T) {
		n := memNet{"storage.test": newFakeStore(), "p1.test": newFakeStore(), "p2.test": newFakeStore()}
		e := newEnv(t, envOptions{storage: httpSource(n, "storage.test"), net: n,
			providers: []string{"http://p1.test", "http://p2.test/"}, lim: Limits{MaxProviders: 3}})
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			if r := e.get(t.Context(), m, id.String()); r.status != http.StatusNotFound {
				t.Fatalf("%s: %d %s", m, r.status, r.body)
			}
		}
		for host, s := range n {
			// GET: the outboard's 404, then the HEAD that tells an absent
			// object from a ron without outboards; HEAD: one.
			if len(s.(*fakeStore).requests()) != 3 {
				t.Errorf("%s saw %d requests, want 3", host, len(s.(*fakeStore).requests()))
			}
		}
	})
}

// TestProviderFallback: after storage answers 404 or 500 the providers are
// tried in order (at most MaxProviders); their requests carry the provider
// bearer and nothing of the client's.
func TestProviderFallback(t *testing.T) {
	for _, st := range []int{http.StatusNotFound, http.StatusInternalServerError} {
		t.Run(http.StatusText(st), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				data, id := pattern(4, 2*cs)
				n := memNet{}
				storage, p1, p2, p3 := newFakeStore(), newFakeStore(), newFakeStore(), newFakeStore()
				if st != http.StatusNotFound {
					storage.put(id, &fakeObj{fails: []int{st, st, st}})
				}
				p2.put(id, honestObj(data))
				p3.put(id, honestObj(data))
				n["storage.test"], n["p1.test"], n["p2.test"], n["p3.test"] = storage, p1, p2, p3
				e := newEnv(t, envOptions{storage: httpSource(n, "storage.test"), net: n, token: "prov-token",
					providers: []string{"http://p1.test", "http://p2.test", "http://p3.test"}, lim: Limits{MaxProviders: 2}})
				r := e.get(t.Context(), http.MethodGet, id.String(), "Cookie", "c=1", "X-Secret", "s", "Authorization", "Bearer client")
				wantBody(t, "GET", r, data)
				// A 404 on the outboard is followed by a HEAD (an absent
				// object, or a ron without outboards?).
				storageWant := map[bool]int{true: 2, false: 1}[st == http.StatusNotFound]
				if len(storage.requests()) != storageWant || len(p1.requests()) != 2 || len(p2.requests()) != 2 || len(p3.requests()) != 0 {
					t.Fatalf("requests: storage %d p1 %d p2 %d p3 %d", len(storage.requests()), len(p1.requests()),
						len(p2.requests()), len(p3.requests()))
				}
				for _, req := range append(p1.requests(), p2.requests()...) {
					if req.Header.Get("Authorization") != "Bearer prov-token" || req.Header.Get("Cookie") != "" ||
						req.Header.Get("X-Secret") != "" {
						t.Fatalf("provider request headers %v", req.Header)
					}
				}
				synctest.Wait()
				if r := e.get(t.Context(), http.MethodGet, id.String()); r.header.Get("Cache-Status") != "ron-edge; hit" {
					t.Fatalf("second GET: %q, want a hit", r.header.Get("Cache-Status"))
				}
			})
		})
	}
}

// TestUpstreamFailures: sources failing other than with 404 → 502
// upstream_unavailable; nothing is remembered (the next GET asks again).
func TestUpstreamFailures(t *testing.T) {
	data, id := pattern(5, 100)
	n, s := storageHolding(id, &fakeObj{fails: []int{http.StatusInternalServerError}})
	e := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})
	if r := e.get(t.Context(), http.MethodGet, id.String()); r.status != http.StatusBadGateway || errCode(r) != "upstream_unavailable" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	s.put(id, honestObj(data))
	wantBody(t, "after the failure", e.get(t.Context(), http.MethodGet, id.String()), data)
	if got := e.metric("edge_fills_total", "result", "error", "source", "storage"); got != 1 {
		t.Fatalf("fills error = %v", got)
	}
}

// TestInProcessStorage: the in-process source is read like any other,
// through its outboard: a right body is stored; a wrong one-group body
// never reaches the client (502 etag_invalid); a wrong last group of a
// longer body aborts the answer after the groups before it.
func TestInProcessStorage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(6, 2*cs+5)
		s := newFakeStore()
		s.put(id, honestObj(data))
		src := &Source{Name: "storage", BaseURL: "http://storage.inproc", Client: &http.Client{Transport: inprocFor(s)}}
		e := newEnv(t, envOptions{storage: src})
		r := e.get(t.Context(), http.MethodGet, id.String())
		wantBody(t, "in-process miss", r, data)
		if reqs := s.requests(); len(reqs) != 2 || !strings.HasSuffix(reqs[0].URL.Path, "/outboard") {
			t.Fatalf("in-process fill: %d requests, the first %s", len(reqs), reqs[0].URL.Path)
		}
		small, sid := pattern(7, 1000)
		s.put(sid, corruptObj(small, 10))
		if r := e.get(t.Context(), http.MethodGet, sid.String()); r.status != http.StatusBadGateway || errReason(r) != "etag_invalid" {
			t.Fatalf("wrong one-group body: %d %s", r.status, r.body)
		}
		big, bid := pattern(8, 3*cs)
		obj := corruptObj(big, len(big)-1)
		obj.gate, obj.gateAfter = make(chan struct{}), 2*cs
		s.put(bid, obj)
		res := make(chan result, 1)
		go func() { res <- e.get(t.Context(), http.MethodGet, bid.String()) }()
		synctest.Wait() // the client has the first two groups
		close(obj.gate)
		r = <-res
		if r.status != http.StatusOK || r.err == nil || !bytes.Equal(r.body, big[:2*cs]) {
			t.Fatalf("wrong last group: %d, %d bytes, %v; want two groups and a cut", r.status, len(r.body), r.err)
		}
		if _, _, ok := e.cache.Object(bid); ok {
			t.Fatal("a wrong body was stored")
		}
		if got := e.metric("edge_rejects_total", "reason", "etag_invalid"); got != 2 {
			t.Fatalf("etag_invalid rejects = %v, want 2", got)
		}
	})
}

// inprocFor is an in-process transport over h.
func inprocFor(h http.Handler) http.RoundTripper { return memNet{"storage.inproc": h} }

// TestRangesOnHit: single ranges 206, several multipart, unsatisfiable
// 416 with bytes */N and reason invalid_range.
func TestRangesOnHit(t *testing.T) {
	data, id := pattern(9, 2*cs)
	n, _ := storageHolding(id, honestObj(data))
	e := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})
	wantBody(t, "fill", e.get(t.Context(), http.MethodGet, id.String()), data)

	r := e.get(t.Context(), http.MethodGet, id.String(), "Range", "bytes=70000-70009")
	if r.status != http.StatusPartialContent || !bytes.Equal(r.body, data[70000:70010]) ||
		r.header.Get("Content-Range") != "bytes 70000-70009/131072" {
		t.Fatalf("single range: %d %q %q", r.status, r.body, r.header.Get("Content-Range"))
	}
	r = e.get(t.Context(), http.MethodGet, id.String(), "Range", "bytes=0-1,-2")
	wantParts(t, r, [][]byte{data[:2], data[len(data)-2:]})
	r = e.get(t.Context(), http.MethodGet, id.String(), "Range", "bytes=200000-")
	if r.status != http.StatusRequestedRangeNotSatisfiable || r.header.Get("Content-Range") != "bytes */131072" ||
		errReason(r) != "invalid_range" {
		t.Fatalf("unsatisfiable: %d %q %s", r.status, r.header.Get("Content-Range"), r.body)
	}
	if e.metric("edge_range_requests_total", "result", "206") != 2 || e.metric("edge_range_requests_total", "result", "416") != 1 {
		t.Fatalf("range metrics %v", e.m.Values())
	}
}

// wantParts checks a multipart/byteranges answer.
func wantParts(t *testing.T, r result, want [][]byte) {
	t.Helper()
	mt, params, err := mime.ParseMediaType(r.header.Get("Content-Type"))
	if r.status != http.StatusPartialContent || err != nil || mt != "multipart/byteranges" {
		t.Fatalf("multipart: %d %q %v", r.status, r.header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(bytes.NewReader(r.body), params["boundary"])
	for i, w := range want {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
		got, _ := io.ReadAll(p)
		if !bytes.Equal(got, w) {
			t.Fatalf("part %d: %q, want %q", i, got, w)
		}
	}
}

// TestHeadMiss: HEAD on a miss asks the source with HEAD and fills nothing.
func TestHeadMiss(t *testing.T) {
	data, id := pattern(10, 5000)
	n, s := storageHolding(id, honestObj(data))
	e := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})
	r := e.get(t.Context(), http.MethodHead, id.String())
	if r.status != http.StatusOK || r.header.Get("Content-Length") != "5000" ||
		r.header.Get("Cache-Status") != "ron-edge; fwd=miss; fwd-status=200" || r.header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("HEAD miss: %d %v", r.status, r.header)
	}
	reqs := s.requests()
	if len(reqs) != 1 || reqs[0].Method != http.MethodHead {
		t.Fatalf("storage saw %d requests (%v), want one HEAD", len(reqs), reqs)
	}
	if _, _, ok := e.cache.Object(id); ok {
		t.Fatal("HEAD filled the cache")
	}
}

// TestQueueFullAndDraining: a full work queue answers 429 busy with
// Retry-After 1 (counted per endpoint); a closed one 503 draining.
func TestQueueFullAndDraining(t *testing.T) {
	_, id := pattern(11, 10)
	n := memNet{"storage.test": newFakeStore()}
	e := newEnv(t, envOptions{storage: httpSource(n, "storage.test"), workers: -1, queueCap: 1})
	if err := e.q.Submit(fillJobNop()); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		r := e.get(t.Context(), m, id.String())
		if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "1" {
			t.Fatalf("%s on a full queue: %d %v", m, r.status, r.header)
		}
	}
	if got := e.metric("busy_rejections_total", "endpoint", Route); got != 2 {
		t.Fatalf("busy rejections %v, want 2", got)
	}
	e.q.Close()
	r := e.get(t.Context(), http.MethodGet, id.String())
	if r.status != http.StatusServiceUnavailable || errCode(r) != "draining" {
		t.Fatalf("GET while draining: %d %s", r.status, r.body)
	}
}

// fillJobNop is a job that does nothing (it fills a queue).
func fillJobNop() fillq.Job { return fillq.Job{Kind: "fill", Run: func(context.Context) {}} }
