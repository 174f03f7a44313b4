package objects

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestRetries: a source answering 503 then 504 is retried after
// min(800 ms, 50 ms·2^n) + U[0, 50 ms]; retries stop after MaxTries; a
// timeout is retried too.
func TestRetries(t *testing.T) {
	t.Run("503 then 504 then the object", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			data, id := pattern(30, 1000)
			obj := honestObj(data)
			obj.fails = []int{http.StatusServiceUnavailable, http.StatusGatewayTimeout}
			n, _ := storageHolding(id, obj)
			e := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})
			t0 := time.Now()
			wantBody(t, "after two retries", e.get(context.Background(), http.MethodGet, id.String()), data)
			if d := time.Since(t0); d < 150*time.Millisecond || d > 250*time.Millisecond {
				t.Fatalf("took %v, want 50–100 ms + 100–150 ms of backoff", d)
			}
			if got := e.metric("backoff_retries_total", "op", "object_fill"); got != 2 {
				t.Fatalf("retries %v, want 2", got)
			}
		})
	})
	t.Run("503 until MaxTries, then the provider", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			data, id := pattern(31, 1000)
			n := memNet{}
			s, p := newFakeStore(), newFakeStore()
			s.put(id, &fakeObj{fails: []int{503, 503, 503, 503}})
			p.put(id, honestObj(data))
			n["storage.test"], n["p.test"] = s, p
			e := newEnv(t, envOptions{storage: httpSource(n, "storage.test"), net: n, providers: []string{"http://p.test"},
				lim: Limits{MaxTries: 3, MaxProviders: 1}})
			wantBody(t, "from the provider", e.get(context.Background(), http.MethodGet, id.String()), data)
			if len(s.requests()) != 3 || e.metric("backoff_retries_total", "op", "object_fill") != 2 {
				t.Fatalf("storage requests %d, retries %v", len(s.requests()), e.metric("backoff_retries_total", "op", "object_fill"))
			}
		})
	})
	t.Run("timeouts", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, id := pattern(32, 1000)
			n, s := storageHolding(id, &fakeObj{stallHeaders: true})
			e := newEnv(t, envOptions{storage: httpSource(n, "storage.test"), lim: Limits{FillTimeout: time.Second, MaxTries: 2}})
			t0 := time.Now()
			r := e.get(context.Background(), http.MethodGet, id.String())
			if r.status != http.StatusGatewayTimeout || time.Since(t0) < 2050*time.Millisecond || time.Since(t0) > 2100*time.Millisecond {
				t.Fatalf("%d after %v; want 504 after two 1 s attempts and one backoff", r.status, time.Since(t0))
			}
			if e.metric("io_timeouts_total", "op", "fill") != 2 || len(s.requests()) != 2 {
				t.Fatalf("timeouts %v, requests %d", e.metric("io_timeouts_total", "op", "fill"), len(s.requests()))
			}
		})
	})
	t.Run("no retry past the client deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, id := pattern(33, 1000)
			n, s := storageHolding(id, &fakeObj{fails: []int{503, 503, 503}})
			e := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})
			r := e.get(context.Background(), http.MethodGet, id.String(), "X-Test-Timeout", "40ms")
			if r.status != http.StatusBadGateway || len(s.requests()) != 1 {
				t.Fatalf("%d, %d requests; want 502 after one attempt (the 50 ms backoff passes the deadline)", r.status, len(s.requests()))
			}
		})
	})
}

// TestCorruptFirstGroupNextSource: storage's first group does not verify
// against the id: nothing went to the client, so the provider is asked and
// the object is stored from it.
func TestCorruptFirstGroupNextSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(34, 3*cs)
		n := memNet{}
		s, p := newFakeStore(), newFakeStore()
		s.put(id, corruptObj(data, 5))
		p.put(id, honestObj(data))
		n["storage.test"], n["p.test"] = s, p
		e := newEnv(t, envOptions{storage: httpSource(n, "storage.test"), net: n, providers: []string{"http://p.test"},
			lim: Limits{MaxProviders: 3}})
		r := e.get(t.Context(), http.MethodGet, id.String())
		wantBody(t, "from the provider", r, data)
		synctest.Wait()
		if r.header.Get("Cache-Status") != "ron-edge; fwd=miss; fwd-status=200; stored" {
			t.Fatalf("Cache-Status %q", r.header.Get("Cache-Status"))
		}
		if b, _, ok := e.cache.Object(id); !ok {
			t.Fatal("not stored")
		} else {
			b.Close()
		}
		if e.metric("edge_rejects_total", "reason", "etag_invalid") != 1 || e.metric("edge_fills_total", "result", "stored", "source", "storage") != 1 {
			t.Fatalf("metrics %v", e.m.Values())
		}
	})
}

// TestCorruptLastGroupAborts: a last group that does not verify against
// the id: the client's connection (a real one) is cut before
// Content-Length, the last group never sent (the third may or may not have
// gone out before the abort), nothing stored; the next GET asks storage
// again.
func TestCorruptLastGroupAborts(t *testing.T) {
	data, id := pattern(35, 4*cs)
	s := newFakeStore()
	storage := httptest.NewServer(s)
	defer storage.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	e := newEnv(t, envOptions{storage: &Source{Name: "storage", BaseURL: storage.URL, Client: &http.Client{Transport: tr}}})
	edge := httptest.NewServer(e.h)
	defer edge.Close()
	ct := &http.Transport{}
	defer ct.CloseIdleConnections()
	for i := 1; i <= 2; i++ {
		obj := corruptObj(data, len(data)-1)
		obj.gate, obj.gateAfter = make(chan struct{}), 3*cs
		s.put(id, obj)
		resp, err := (&http.Client{Transport: ct}).Get(edge.URL + "/o/" + id.String())
		if err != nil || resp.StatusCode != http.StatusOK || resp.ContentLength != 4*cs {
			t.Fatalf("GET %d: %v %v", i, err, resp)
		}
		head := make([]byte, 2*cs) // the client holds verified bytes before the last group is read
		if _, err := io.ReadFull(resp.Body, head); err != nil {
			t.Fatal(err)
		}
		close(obj.gate)
		rest, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := append(head, rest...)
		if err == nil || len(got) > 3*cs || !bytes.Equal(got, data[:len(got)]) {
			t.Fatalf("GET %d: %d more bytes, %v; want at most the third group, then a cut", i, len(rest), err)
		}
		if got := s.gets.Load(); got != int64(i) {
			t.Fatalf("storage saw %d body GETs after GET %d", got, i)
		}
	}
	if _, _, ok := e.cache.Object(id); ok {
		t.Fatal("a wrong body was stored")
	}
	if e.metric("edge_rejects_total", "reason", "etag_invalid") != 2 || e.metric("edge_fills_total", "result", "hash_mismatch", "source", "storage") != 2 {
		t.Fatalf("metrics %v", e.m.Values())
	}
}

// TestCorruptOneGroup: the docs/edge.md §13 row with a one-group object:
// every shape is a 502 upstream_unavailable with reason etag_invalid, never
// a body.
func TestCorruptOneGroup(t *testing.T) {
	data, id := pattern(36, 5000)
	for name, obj := range map[string]*fakeObj{
		"outboard of the wrong bytes": selfConsistentObj(data, 7),
		"outboard of the right bytes": corruptObj(data, 7),
	} {
		t.Run(name, func(t *testing.T) {
			n, _ := storageHolding(id, obj)
			e := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})
			r := e.get(t.Context(), http.MethodGet, id.String())
			if r.status != http.StatusBadGateway || errCode(r) != "upstream_unavailable" || errReason(r) != "etag_invalid" {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	}
}

// TestBigObjectStreamed: above the store limit the object is streamed,
// verified, to its client and not stored; in memory mode the 1/16 budget
// rule counts reason amnesia.
func TestBigObjectStreamed(t *testing.T) {
	data, id := pattern(37, 5*cs+7)
	for _, row := range []struct {
		name    string
		lim     Limits
		budget  int64
		amnesia float64
	}{
		{"fill_max_bytes", Limits{FillMaxBytes: 2 * cs}, 0, 0},
		{"amnesia budget", Limits{}, 32 * cs, 1},
	} {
		t.Run(row.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n, s := storageHolding(id, honestObj(data))
				e := newEnv(t, envOptions{storage: httpSource(n, "storage.test"), lim: row.lim, memBudget: row.budget})
				r := e.get(t.Context(), http.MethodGet, id.String())
				wantBody(t, "big", r, data)
				if cs := r.header.Get("Cache-Status"); cs != "ron-edge; fwd=miss; fwd-status=200" {
					t.Fatalf("Cache-Status %q", cs)
				}
				if _, _, ok := e.cache.Object(id); ok {
					t.Fatal("stored")
				}
				wantBody(t, "again", e.get(t.Context(), http.MethodGet, id.String()), data)
				synctest.Wait() // the jobs have counted
				if s.gets.Load() != 2 || e.metric("edge_fills_total", "result", "passed", "source", "storage") != 2 {
					t.Fatalf("%d body GETs, fills %v", s.gets.Load(), e.m.Values())
				}
				if got := e.metric("edge_rejects_total", "reason", "amnesia"); got != 2*row.amnesia {
					t.Fatalf("amnesia rejects %v", got)
				}
			})
		})
	}
}

// TestBigObjectWaiters: requests joining the fill of an object too large
// to store fetch it on their own.
func TestBigObjectWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(38, 3*cs)
		obj := honestObj(data)
		obj.gate = make(chan struct{})
		n, s := storageHolding(id, obj)
		e := newEnv(t, envOptions{storage: httpSource(n, "storage.test"), lim: Limits{FillMaxBytes: cs}})
		res := make(chan result, 3)
		for range 3 {
			go func() { res <- e.get(context.Background(), http.MethodGet, id.String()) }()
		}
		synctest.Wait()
		close(obj.gate)
		for range 3 {
			wantBody(t, "big", <-res, data)
		}
		if s.gets.Load() != 3 {
			t.Fatalf("%d body GETs, want one per request", s.gets.Load())
		}
	})
}

// TestRangeOnMiss: a Range on a miss is cut from the filling entry as soon
// as its bytes are in, while the rest still comes; the whole object is
// stored.
func TestRangeOnMiss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(39, 4*cs)
		obj := honestObj(data)
		obj.gate, obj.gateAfter = make(chan struct{}), 2*cs
		n, _ := storageHolding(id, obj)
		e := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})
		res := make(chan result, 1)
		go func() {
			res <- e.get(context.Background(), http.MethodGet, id.String(), "Range", "bytes=100000-100009")
		}()
		synctest.Wait()
		select {
		case r := <-res:
			if r.status != http.StatusPartialContent || !bytes.Equal(r.body, data[100000:100010]) {
				t.Fatalf("range: %d %q", r.status, r.body)
			}
		default:
			t.Fatal("the range was not answered while the fill waits for later groups")
		}
		close(obj.gate)
		synctest.Wait()
		if b, _, ok := e.cache.Object(id); !ok || b.Size() != int64(len(data)) {
			t.Fatal("the whole object was not stored")
		} else {
			b.Close()
		}
	})
}

// TestRangeOnBigMiss: above the store limit one range fetches only the
// group-aligned span covering it; several ranges get the whole object,
// 200, streamed.
func TestRangeOnBigMiss(t *testing.T) {
	data, id := pattern(40, 6*cs)
	n, s := storageHolding(id, honestObj(data))
	e := newEnv(t, envOptions{storage: httpSource(n, "storage.test"), lim: Limits{FillMaxBytes: 2 * cs}})
	r := e.get(t.Context(), http.MethodGet, id.String(), "Range", "bytes=200000-200009")
	if r.status != http.StatusPartialContent || !bytes.Equal(r.body, data[200000:200010]) ||
		r.header.Get("Content-Range") != "bytes 200000-200009/393216" ||
		r.header.Get("Cache-Status") != "ron-edge; fwd=miss; fwd-status=206" {
		t.Fatalf("range: %d %q %v", r.status, r.body, r.header)
	}
	if rng := lastRange(s); rng != "bytes=196608-262143" {
		t.Fatalf("storage got Range %q, want the group-aligned span of group 3", rng)
	}
	r = e.get(t.Context(), http.MethodGet, id.String(), "Range", "bytes=0-1,-2")
	wantBody(t, "several ranges", r, data)
	r = e.get(t.Context(), http.MethodGet, id.String(), "Range", "bytes=999999-")
	if r.status != http.StatusRequestedRangeNotSatisfiable || r.header.Get("Content-Range") != "bytes */393216" {
		t.Fatalf("unsatisfiable: %d %v", r.status, r.header)
	}
}

// lastRange is the Range of the last body GET storage saw.
func lastRange(s *fakeStore) string {
	reqs := s.requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if !strings.HasSuffix(reqs[i].URL.Path, "/outboard") && reqs[i].Method == http.MethodGet {
			return reqs[i].Header.Get("Range")
		}
	}
	return ""
}
