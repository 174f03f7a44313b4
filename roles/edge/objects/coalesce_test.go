package objects

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestHundredConcurrentMisses: 100 GETs of one id while its fill waits on
// storage make exactly one upstream body request; every client gets the
// whole object, 99 of them marked collapsed.
func TestHundredConcurrentMisses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(20, 3*cs+1)
		obj := honestObj(data)
		obj.gate = make(chan struct{})
		n, s := storageHolding(id, obj)
		e := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})
		results := make(chan result, 100)
		for range 100 {
			go func() { results <- e.get(context.Background(), http.MethodGet, id.String()) }()
		}
		synctest.Wait()
		close(obj.gate)
		collapsed := 0
		for range 100 {
			r := <-results
			wantBody(t, "concurrent miss", r, data)
			if strings.HasSuffix(r.header.Get("Cache-Status"), "; collapsed") {
				collapsed++
			}
		}
		if got := s.gets.Load(); got != 1 {
			t.Fatalf("storage saw %d body GETs, want 1", got)
		}
		if collapsed != 99 || e.metric("edge_coalesced_total", "route", Route) != 99 {
			t.Fatalf("collapsed %d, coalesced_total %v; want 99", collapsed, e.metric("edge_coalesced_total", "route", Route))
		}
		if got := e.metric("tasks_spawned_total", "kind", "fill"); got != 1 {
			t.Fatalf("fill tasks %v, want 1", got)
		}
	})
}

// TestWaiterDeadline: a waiter whose deadline passes gets 504 timeout at
// its deadline; the fill goes on and the leader gets the object.
func TestWaiterDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(21, 2*cs)
		obj := honestObj(data)
		obj.gate = make(chan struct{})
		n, _ := storageHolding(id, obj)
		e := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})
		leader := make(chan result, 1)
		go func() { leader <- e.get(context.Background(), http.MethodGet, id.String()) }()
		synctest.Wait()
		t0 := time.Now()
		r := e.get(context.Background(), http.MethodGet, id.String(), "X-Test-Timeout", "1s")
		if r.status != http.StatusGatewayTimeout || errCode(r) != "timeout" || time.Since(t0) != time.Second {
			t.Fatalf("waiter: %d %s after %v; want 504 timeout after 1s", r.status, r.body, time.Since(t0))
		}
		close(obj.gate)
		wantBody(t, "leader", <-leader, data)
		synctest.Wait()
		if _, _, ok := e.cache.Object(id); !ok {
			t.Fatal("the fill was not stored")
		}
	})
}

// TestFirstClientLeaves: the fill goes on when its first client
// disconnects mid-body: a waiter still gets the object and it is stored.
func TestFirstClientLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(22, 4*cs)
		obj := honestObj(data)
		obj.gate, obj.gateAfter = make(chan struct{}), 2*cs
		n, s := storageHolding(id, obj)
		e := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})
		ctx, cancel := context.WithCancel(context.Background())
		leader := make(chan result, 1)
		go func() { leader <- e.get(ctx, http.MethodGet, id.String()) }()
		synctest.Wait() // the leader has the first groups and waits for more
		waiter := make(chan result, 1)
		go func() { waiter <- e.get(context.Background(), http.MethodGet, id.String()) }()
		synctest.Wait()
		cancel()
		if r := <-leader; r.err == nil {
			t.Fatalf("the cancelled leader got a whole answer: %d, %d bytes", r.status, len(r.body))
		}
		close(obj.gate)
		wantBody(t, "waiter", <-waiter, data)
		synctest.Wait()
		r := e.get(context.Background(), http.MethodGet, id.String())
		wantBody(t, "after", r, data)
		if r.header.Get("Cache-Status") != "ron-edge; hit" || s.gets.Load() != 1 {
			t.Fatalf("after the fill: %q, %d body GETs", r.header.Get("Cache-Status"), s.gets.Load())
		}
	})
}

// TestLeaderLeavesBeforeHeaders: the leader gone before anything arrived;
// the fill still completes and is stored.
func TestLeaderLeavesBeforeHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(23, cs+3)
		obj := honestObj(data)
		obj.gate = make(chan struct{})
		n, _ := storageHolding(id, obj)
		e := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})
		r := e.get(context.Background(), http.MethodGet, id.String(), "X-Test-Timeout", "500ms")
		if r.status != http.StatusGatewayTimeout {
			t.Fatalf("leader: %d, want 504", r.status)
		}
		close(obj.gate)
		synctest.Wait()
		if _, _, ok := e.cache.Object(id); !ok {
			t.Fatal("the fill was dropped with its first client")
		}
	})
}

// TestFailedFillFailsEveryWaiter: storage never answers; every request of
// the fill gets the same 504 at fill_timeout, and nothing is remembered.
func TestFailedFillFailsEveryWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(24, 100)
		n, s := storageHolding(id, &fakeObj{stallHeaders: true})
		e := newEnv(t, envOptions{storage: httpSource(n, "storage.test"), lim: Limits{FillTimeout: time.Second, MaxTries: 1}})
		results := make(chan result, 5)
		for range 5 {
			go func() { results <- e.get(context.Background(), http.MethodGet, id.String()) }()
		}
		for range 5 {
			if r := <-results; r.status != http.StatusGatewayTimeout || errCode(r) != "timeout" {
				t.Fatalf("waiter: %d %s", r.status, r.body)
			}
		}
		if got := len(s.requests()); got != 1 {
			t.Fatalf("storage saw %d requests, want 1", got)
		}
		if e.metric("io_timeouts_total", "op", "fill") != 1 || e.metric("edge_fills_total", "result", "timeout", "source", "storage") != 1 {
			t.Fatalf("metrics %v", e.m.Values())
		}
		s.put(id, honestObj(data))
		wantBody(t, "next GET", e.get(context.Background(), http.MethodGet, id.String()), data)
	})
}

// TestDrainAbortsFill: shutdown aborts a running fill after the drain
// deadline; its client gets 503 draining and nothing is stored.
func TestDrainAbortsFill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(25, 2*cs)
		obj := honestObj(data)
		obj.gate = make(chan struct{})
		defer close(obj.gate)
		n, _ := storageHolding(id, obj)
		e := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})
		res := make(chan result, 1)
		go func() { res <- e.get(context.Background(), http.MethodGet, id.String()) }()
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if aborted := e.q.Drain(ctx); aborted != 1 {
			t.Fatalf("Drain aborted %d jobs, want 1", aborted)
		}
		if r := <-res; r.status != http.StatusServiceUnavailable || errCode(r) != "draining" {
			t.Fatalf("client of the aborted fill: %d %s", r.status, r.body)
		}
		if _, _, ok := e.cache.Object(id); ok {
			t.Fatal("an aborted fill was stored")
		}
	})
}
