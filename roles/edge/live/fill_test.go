package live

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
)

// TestCoalescing: 100 concurrent misses for one key make one origin
// request; every client gets the body, 99 of them collapsed.
func TestCoalescing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		release := make(chan struct{})
		e.o.set(func(w http.ResponseWriter, r *http.Request) {
			<-release
			reply(200, "shared body", "Cache-Control", "max-age=60")(w, r)
		})
		const n = 100
		recs := make([]*httptest.ResponseRecorder, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r, cancel := request(http.MethodGet, "/assets/o/co", nil)
				defer cancel()
				recs[i] = httptest.NewRecorder()
				e.echo.ServeHTTP(recs[i], r)
			})
		}
		synctest.Wait()
		if c := e.o.count(); c != 1 {
			t.Fatalf("origin saw %d requests while the fill was pending, want 1", c)
		}
		close(release)
		wg.Wait()
		collapsed := 0
		for _, rec := range recs {
			expect(t, rec, 200, "shared body")
			if strings.HasSuffix(rec.Header().Get("Cache-Status"), "; collapsed") {
				collapsed++
			}
		}
		if collapsed != n-1 || e.metric(`ron_edge_coalesced_total{role="edge",route="/assets/{origin}/{path...}"}`) != n-1 {
			t.Errorf("collapsed %d, want %d", collapsed, n-1)
		}
		if e.o.count() != 1 {
			t.Errorf("origin saw %d requests", e.o.count())
		}
	})
}

// TestCoalescedWaitersReadTheGrowingFill: waiters read the body while the
// origin is still sending it, at the origin's pace.
func TestCoalescedWaitersReadTheGrowingFill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		more := make(chan struct{})
		e.o.set(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Cache-Control", "max-age=60")
			w.Header().Set("Content-Length", "10")
			_, _ = io.WriteString(w, "01234")
			w.(http.Flusher).Flush()
			<-more
			_, _ = io.WriteString(w, "56789")
		})
		var wg sync.WaitGroup
		recs := make([]*httptest.ResponseRecorder, 3)
		for i := range recs {
			wg.Go(func() {
				r, cancel := request(http.MethodGet, "/assets/o/grow", nil)
				defer cancel()
				recs[i] = httptest.NewRecorder()
				e.echo.ServeHTTP(recs[i], r)
			})
		}
		synctest.Wait()
		for _, rec := range recs {
			if got := rec.Body.String(); got != "01234" {
				t.Fatalf("before the rest arrived a client had %q", got)
			}
		}
		close(more)
		wg.Wait()
		for _, rec := range recs {
			expect(t, rec, 200, "0123456789")
		}
	})
}

// TestCoalescedNotStorable: waiters of a response that is not stored send
// their own requests.
func TestCoalescedNotStorable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		release := make(chan struct{})
		e.o.set(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-First") != "" {
				<-release
			}
			reply(200, "private", "Cache-Control", "private")(w, r)
		})
		var wg sync.WaitGroup
		var first, second *httptest.ResponseRecorder
		wg.Go(func() { first = e.getNoWait("/assets/o/np", "X-First", "1") })
		synctest.Wait()
		wg.Go(func() { second = e.getNoWait("/assets/o/np") })
		synctest.Wait()
		close(release)
		wg.Wait()
		expect(t, first, 200, "private")
		expect(t, second, 200, "private")
		if e.o.count() != 2 {
			t.Errorf("origin saw %d requests, want 2", e.o.count())
		}
	})
}

// TestRetries: 503 and 504 are retried up to max_tries with
// min(800 ms, 50 ms·2^n) + U[0, 50 ms] between attempts.
func TestRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{origin: func(o *Origin) { o.MaxTries = 3 }})
		var times []time.Time
		e.o.set(func(w http.ResponseWriter, r *http.Request) {
			times = append(times, time.Now())
			switch len(times) {
			case 1:
				reply(503, "busy")(w, r)
			case 2:
				reply(504, "slow")(w, r)
			default:
				reply(200, "ok", "Cache-Control", "max-age=60")(w, r)
			}
		})
		expect(t, e.get("/assets/o/rt"), 200, "ok")
		if len(times) != 3 {
			t.Fatalf("%d attempts", len(times))
		}
		for n, d := range []time.Duration{times[1].Sub(times[0]), times[2].Sub(times[1])} {
			lo := 50 * time.Millisecond << n
			if d < lo || d > lo+50*time.Millisecond {
				t.Errorf("pause before retry %d = %v, want within [%v, %v]", n, d, lo, lo+50*time.Millisecond)
			}
		}
		if v := e.metric(`ron_backoff_retries_total{role="edge",op="live_fill"}`); v != 2 {
			t.Errorf("retries = %v", v)
		}
		// All attempts failing: the last answer is relayed.
		e.o.set(reply(503, "down"))
		expect(t, e.get("/assets/o/rt2"), 503, "down")
		if e.o.count() != 6 {
			t.Errorf("origin saw %d", e.o.count())
		}
		// Other statuses are not retried.
		e.o.set(reply(500, "err"))
		expect(t, e.get("/assets/o/rt3"), 500, "err")
		if e.o.count() != 7 {
			t.Errorf("origin saw %d", e.o.count())
		}
	})
}

// TestRetryNeedsTheDeadline: no retry when its pause would pass the
// client's deadline.
func TestRetryNeedsTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{origin: func(o *Origin) { o.MaxTries = 3 }})
		e.o.set(reply(503, "busy"))
		r := httptest.NewRequest(http.MethodGet, "/assets/o/dl", nil)
		ctx, cancel := contextWithTimeout(r, 40*time.Millisecond)
		defer cancel()
		rec := httptest.NewRecorder()
		e.echo.ServeHTTP(rec, r.WithContext(ctx))
		expect(t, rec, 503, "busy")
		if e.o.count() != 1 {
			t.Errorf("origin saw %d", e.o.count())
		}
	})
}

// TestFillTimeout: the origin must send its headers within fill_timeout;
// timed-out attempts are retried and counted.
func TestFillTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{origin: func(o *Origin) { o.MaxTries = 2 },
			settings: func(s *Settings) { s.FillTimeout = time.Second }})
		e.o.set(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
			}
		})
		start := time.Now()
		rec := e.get("/assets/o/ft")
		if code, _ := errorCode(t, rec); rec.Code != 504 || code != httpx.CodeTimeout {
			t.Fatalf("%d %s", rec.Code, code)
		}
		if d := time.Since(start); d < 2*time.Second || d > 2100*time.Millisecond {
			t.Errorf("answered after %v", d)
		}
		if v := e.metric(`ron_io_timeouts_total{role="edge",op="fill"}`); v != 2 {
			t.Errorf("fill timeouts = %v", v)
		}
		if e.o.count() != 2 || e.fills("timeout") != 1 {
			t.Errorf("origin saw %d, fills timeout %v", e.o.count(), e.fills("timeout"))
		}
	})
}

// TestFillTimeoutBody: a body stalling longer than fill_timeout per
// 64 KiB aborts the fill; the client's response is cut short and nothing
// is stored.
func TestFillTimeoutBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{settings: func(s *Settings) { s.FillTimeout = time.Second }})
		e.o.set(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "max-age=60")
			w.Header().Set("Content-Length", "100")
			_, _ = io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
			}
		})
		rec, aborted := e.doAborted(http.MethodGet, "/assets/o/fb")
		if !aborted || rec.Code != 200 || rec.Body.String() != "partial" {
			t.Fatalf("aborted %v, %d %q", aborted, rec.Code, rec.Body)
		}
		synctest.Wait()
		if e.fills("timeout") != 1 || len(e.cache.Variants("o/fb?")) != 0 {
			t.Errorf("fills timeout %v, variants %d", e.fills("timeout"), len(e.cache.Variants("o/fb?")))
		}
	})
}

// TestSlowOriginBodyWithinPace: a body that keeps coming at least every
// 64 KiB within fill_timeout is fine however long it takes in all.
func TestSlowOriginBodyWithinPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{settings: func(s *Settings) { s.FillTimeout = time.Second }})
		chunk := bytes.Repeat([]byte("z"), 64<<10)
		e.o.set(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Cache-Control", "max-age=60")
			for range 5 {
				time.Sleep(900 * time.Millisecond)
				_, _ = w.Write(chunk)
				w.(http.Flusher).Flush()
			}
		})
		expect(t, e.get("/assets/o/slow"), 200, strings.Repeat("z", 5*64<<10))
	})
}

// TestBusy: a full work queue answers 429 busy with Retry-After 1.
func TestBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{queueCap: 1, noWorkers: true})
		var wg sync.WaitGroup
		wg.Go(func() { e.getNoWait("/assets/o/b1") }) // takes the only slot, never runs
		synctest.Wait()
		rec := e.get("/assets/o/b2")
		if code, _ := errorCode(t, rec); rec.Code != 429 || code != httpx.CodeBusy || rec.Header().Get("Retry-After") != "1" {
			t.Fatalf("%d %s Retry-After %q", rec.Code, code, rec.Header().Get("Retry-After"))
		}
		if v := e.metric(`ron_busy_rejections_total{role="edge",endpoint="/assets/{origin}/{path...}"}`); v != 1 {
			t.Errorf("busy rejections %v", v)
		}
		wg.Wait() // the queued job expires with its client's deadline
	})
}

// TestTooLargeRelayed: bodies over the store limit are streamed to the
// client and not stored: with a known length at once, with an unknown
// length once they grow past it (amnesia: 1/16 of the budget).
func TestTooLargeRelayed(t *testing.T) {
	big := strings.Repeat("b", 5000)
	for _, chunked := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			e := newEnv(t, envConfig{cacheMax: 16 * 1000})
			e.o.set(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Cache-Control", "max-age=60")
				if chunked {
					for i := 0; i < len(big); i += 700 {
						_, _ = io.WriteString(w, big[i:min(i+700, len(big))])
						w.(http.Flusher).Flush()
					}
					return
				}
				_, _ = io.WriteString(w, big)
			})
			expect(t, e.get("/assets/o/big"), 200, big)
			expect(t, e.get("/assets/o/big"), 200, big)
			if e.o.count() != 2 || len(e.cache.Variants("o/big?")) != 0 {
				t.Errorf("chunked %v: origin saw %d", chunked, e.o.count())
			}
			if e.rejects(reasonAmnesia) != 2 || e.fills("passed") != 2 {
				t.Errorf("chunked %v: amnesia %v passed %v", chunked, e.rejects(reasonAmnesia), e.fills("passed"))
			}
		})
	}
}

// TestOverflowWithWaiters: waiters of a fill of unknown length that
// overflows send their own requests; the leader gets the whole body.
func TestOverflowWithWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{settings: func(s *Settings) { s.FillMaxBytes = 1000 }})
		big := strings.Repeat("c", 3000)
		gate := make(chan struct{})
		first := true
		var mu sync.Mutex
		e.o.set(func(w http.ResponseWriter, _ *http.Request) {
			mu.Lock()
			wait := first
			first = false
			mu.Unlock()
			w.Header().Set("Cache-Control", "max-age=60")
			_, _ = io.WriteString(w, big[:500])
			w.(http.Flusher).Flush()
			if wait {
				<-gate
			}
			_, _ = io.WriteString(w, big[500:])
		})
		var wg sync.WaitGroup
		recs := make([]*httptest.ResponseRecorder, 3)
		for i := range recs {
			wg.Go(func() {
				r, cancel := request(http.MethodGet, "/assets/o/ov", nil)
				defer cancel()
				recs[i] = httptest.NewRecorder()
				e.echo.ServeHTTP(recs[i], r)
			})
			synctest.Wait()
		}
		close(gate)
		wg.Wait()
		for _, rec := range recs {
			expect(t, rec, 200, big)
		}
		if e.o.count() != 3 {
			t.Errorf("origin saw %d", e.o.count())
		}
	})
}

// TestAmnesiaWritesNothing: with the in-memory cache fills and hits leave
// the disk untouched; with a cache dir the blobs land there.
func TestAmnesiaWritesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(reply(200, strings.Repeat("m", 100<<10), "Cache-Control", "max-age=60"))
		e.get("/assets/o/m")
		expect(t, e.get("/assets/o/m"), 200, "*", "Cache-Status", "ron-edge; hit; ttl=60")
	})
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) != 0 {
		t.Fatalf("amnesia left %d files in the temp dir (%v)", len(entries), err)
	}
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{cacheDir: dir})
		e.o.set(reply(200, "on disk", "Cache-Control", "max-age=60"))
		e.get("/assets/o/d")
		expect(t, e.get("/assets/o/d"), 200, "on disk", "Cache-Status", "ron-edge; hit; ttl=60")
	})
	if entries, _ := os.ReadDir(dir); len(entries) == 0 {
		t.Fatal("the disk cache wrote nothing")
	}
}

// TestDrainAbortsFills: at shutdown a running fill is aborted: its client
// gets 503 draining and nothing is stored.
func TestDrainAbortsFills(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{})
		e.o.set(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(4 * time.Second):
			case <-r.Context().Done():
			}
		})
		var rec *httptest.ResponseRecorder
		var wg sync.WaitGroup
		wg.Go(func() { rec = e.getNoWait("/assets/o/dr") })
		synctest.Wait()
		ctx, cancel := contextWithTimeout(httptest.NewRequest(http.MethodGet, "/", nil), time.Second)
		defer cancel()
		if n := e.q.Drain(ctx); n != 1 {
			t.Errorf("Drain aborted %d jobs, want 1", n)
		}
		wg.Wait()
		if code, _ := errorCode(t, rec); rec.Code != 503 || code != httpx.CodeDraining {
			t.Fatalf("%d %s", rec.Code, code)
		}
		if len(e.cache.Variants("o/dr?")) != 0 {
			t.Error("an aborted fill left an entry")
		}
	})
}

// TestInvalidatedNeverServedStale: after an unsafe method invalidated an
// entry it is not served stale when the origin is unreachable.
func TestInvalidatedNeverServedStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envConfig{origin: func(o *Origin) { o.ForwardUnsafe = true }})
		e.o.set(reply(200, "v", "Cache-Control", "max-age=600, stale-if-error=600"))
		e.get("/assets/o/iv")
		e.o.set(reply(204, ""))
		e.do(http.MethodPost, "/assets/o/iv")
		e.ln.SetRefuse(true)
		e.ln.DropAll()
		if rec := e.get("/assets/o/iv"); rec.Code != 502 {
			t.Fatalf("status %d: an invalidated entry was served", rec.Code)
		}
	})
}
