package provider

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/store/verified/vfetch"
	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

func TestHeaderTimeoutMovesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(1000)
		n := newMemNet()
		n.responders["slow.test"] = stallHeaders
		n.handlers["good.test"] = honest(data)
		f, m := newFetcher(t, Options{HTTP: n.client(), Timeout: 5 * time.Second})
		t0 := time.Now()
		rec, err, aborted := serveRec(f, t.Context(), getReq(t), id, []string{"http://slow.test", "http://good.test"})
		if err != nil || aborted || rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), data) {
			t.Fatalf("%d %v %v", rec.Code, err, aborted)
		}
		if d := time.Since(t0); d != 5*time.Second {
			t.Fatalf("took %v, want the 5 s header timeout", d)
		}
		if metric(m, timeoutSeries) != 1 || metric(m, requestsSeries(vfetch.CodeTimeout)) != 1 {
			t.Fatalf("metrics %v", m.Values())
		}
		if len(f.Filter([]string{"http://slow.test"}, "")) != 1 {
			t.Fatal("a timeout must not mark the provider bad")
		}
	})
}

// Progress is per group: a provider taking 4 s per group of a 4-group
// object (16 s in all) is fine with a 5 s timeout; one that stalls after two
// groups aborts the response once the third group is 5 s late.
func TestGroupProgressTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(4 * cs)
		n := newMemNet()
		n.responders["slow.test"] = streamBody(data, 4*time.Second, len(data))
		n.responders["stuck.test"] = streamBody(data, 0, 2*cs+100)
		f, m := newFetcher(t, Options{HTTP: n.client(), Timeout: 5 * time.Second})

		t0 := time.Now()
		rec, err, aborted := serveRec(f, t.Context(), getReq(t), id, []string{"http://slow.test"})
		if err != nil || aborted || !bytes.Equal(rec.Body.Bytes(), data) || time.Since(t0) != 16*time.Second {
			t.Fatalf("slow provider: %v %v, %d bytes after %v", err, aborted, rec.Body.Len(), time.Since(t0))
		}

		t0 = time.Now()
		rec, err, aborted = serveRec(f, t.Context(), getReq(t), id, []string{"http://stuck.test"})
		if err != nil || !aborted || rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), data[:2*cs]) {
			t.Fatalf("stuck provider: %v %v, %d bytes", err, aborted, rec.Body.Len())
		}
		if time.Since(t0) != 5*time.Second || metric(m, timeoutSeries) != 1 {
			t.Fatalf("aborted after %v, timeouts %v", time.Since(t0), metric(m, timeoutSeries))
		}
	})
}

func TestBadMarkExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(100)
		n := newMemNet()
		n.handlers["bad.test"] = corrupt(data, 0)
		n.handlers["good.test"] = honest(data)
		f, _ := newFetcher(t, Options{HTTP: n.client()})
		all := []string{"http://bad.test", "http://good.test"}
		if rec, err, _ := serveRec(f, t.Context(), getReq(t), id, all); err != nil || rec.Code != 200 {
			t.Fatalf("%d %v", rec.Code, err)
		}
		time.Sleep(DefaultBadFor - time.Second)
		if got := f.Filter(all, ""); len(got) != 1 {
			t.Fatalf("still bad: Filter = %v", got)
		}
		time.Sleep(2 * time.Second)
		if got := f.Filter(all, ""); len(got) != 2 {
			t.Fatalf("after BadFor: Filter = %v", got)
		}
	})
}

func TestBreakerOpensThenProbes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(100)
		p := honest(data)
		p.outboardStatus = http.StatusServiceUnavailable
		n := newMemNet()
		n.handlers["p.test"] = p
		f, m := newFetcher(t, Options{HTTP: n.client()})
		providers := []string{"http://p.test"}
		for i := range 5 {
			if _, err, _ := serveRec(f, t.Context(), getReq(t), id, providers); httpx.AsError(err).Status != http.StatusBadGateway {
				t.Fatalf("attempt %d: %v", i, err)
			}
		}
		if len(p.requests()) != 5 || metric(m, breakerSeries("open")) != 1 || metric(m, breakerSeries("closed")) != 0 {
			t.Fatalf("%d requests, gauges %v", len(p.requests()), m.Values())
		}
		// Open: no request reaches the provider.
		_, err, _ := serveRec(f, t.Context(), getReq(t), id, providers)
		if e := httpx.AsError(err); e.Status != http.StatusBadGateway || e.Details["reason"] != "no_provider" || len(p.requests()) != 5 {
			t.Fatalf("open breaker: %v, %d requests", err, len(p.requests()))
		}
		// After the open timeout one probe goes through; success closes it.
		time.Sleep(5*time.Second + time.Millisecond)
		if metric(m, breakerSeries("half_open")) != 1 {
			t.Fatalf("gauges %v", m.Values())
		}
		p.outboardStatus = 0
		if rec, err, _ := serveRec(f, t.Context(), getReq(t), id, providers); err != nil || rec.Code != 200 {
			t.Fatalf("probe: %d %v", rec.Code, err)
		}
		if metric(m, breakerSeries("closed")) != 1 {
			t.Fatalf("gauges %v", m.Values())
		}
	})
}

func TestCallerContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, id := pattern(100)
		n := newMemNet()
		n.responders["slow.test"] = stallHeaders
		f, _ := newFetcher(t, Options{HTTP: n.client(), Timeout: time.Minute})
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		_, err, _ := serveRec(f, ctx, getReq(t), id, []string{"http://slow.test", "http://slow.test/other"})
		if e := httpx.AsError(err); e.Status != http.StatusGatewayTimeout || e.Code != httpx.CodeTimeout {
			t.Fatalf("deadline: %v", err)
		}
		ctx, cancel = context.WithCancel(t.Context())
		cancel()
		if _, err, _ := serveRec(f, ctx, getReq(t), id, []string{"http://slow.test"}); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled: %v", err)
		}
		// Neither counts against the provider.
		if c := f.health.breakerFor("http://slow.test").Counts(); c.TotalFailures != 0 || c.TotalSuccesses != 0 || c.TotalExclusions != 2 {
			t.Fatal("caller-ended attempts reached the breaker")
		}
	})
}

// failWriter is a client that went away after the headers.
type failWriter struct{ h http.Header }

func (w *failWriter) Header() http.Header       { return w.h }
func (w *failWriter) WriteHeader(int)           {}
func (w *failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestClientGoneIsNotTheProvidersFault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(2 * cs)
		n := newMemNet()
		n.handlers["p.test"] = honest(data)
		f, _ := newFetcher(t, Options{HTTP: n.client()})
		for range 6 {
			func() {
				defer func() {
					if v := recover(); v != http.ErrAbortHandler {
						t.Fatalf("recovered %v", v)
					}
				}()
				_ = f.Serve(t.Context(), &failWriter{h: http.Header{}}, getReq(t), id, []string{"http://p.test"}, nil)
			}()
		}
		if f.health.worstState() != "closed" || len(f.Filter([]string{"http://p.test"}, "")) != 1 {
			t.Fatal("client failures were charged to the provider")
		}
	})
}

// A provider answering 404 whose body then stalls cannot hold the read:
// Timeout for the outboard's 404, Timeout for the HEAD that tells an
// absent object from a ron without outboards, then the next provider.
func TestStalledErrorBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(100)
		n := newMemNet()
		n.responders["p.test"] = func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusNotFound, Header: http.Header{}, ContentLength: -1, Request: r,
				Body: &vfetchtest.Paced{Ctx: r.Context(), Data: data, StallAfter: 0}}, nil
		}
		n.handlers["good.test"] = honest(data)
		f, _ := newFetcher(t, Options{HTTP: n.client(), Timeout: 5 * time.Second})
		t0 := time.Now()
		rec, err, _ := serveRec(f, t.Context(), getReq(t), id, []string{"http://p.test", "http://good.test"})
		if err != nil || rec.Code != 200 || time.Since(t0) != 10*time.Second {
			t.Fatalf("%d %v after %v", rec.Code, err, time.Since(t0))
		}
	})
}
