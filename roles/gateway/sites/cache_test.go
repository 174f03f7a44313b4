package sites

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
)

func TestNameCacheTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options{})
		e.publish("site", siteFiles)
		get := func() { e.do(http.MethodGet, "/n/site/") }
		get()
		time.Sleep(DefaultNameCacheTTL - time.Millisecond)
		get()
		if n := e.res.count("site"); n != 1 {
			t.Fatalf("resolves within TTL: %d", n)
		}
		time.Sleep(time.Millisecond)
		get()
		if n := e.res.count("site"); n != 2 {
			t.Fatalf("resolves after TTL: %d", n)
		}
	})
}

func TestNameCacheNegativeAndErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options{})
		get := func(n string) int { return e.do(http.MethodGet, "/n/"+n+"/").Code }
		if get("later") != http.StatusNotFound {
			t.Fatal("unknown name not 404")
		}
		e.publish("later", siteFiles)
		time.Sleep(DefaultNotFoundTTL - time.Millisecond)
		if get("later") != http.StatusNotFound || e.res.count("later") != 1 {
			t.Fatal("404 not cached for 2s")
		}
		time.Sleep(time.Millisecond)
		if get("later") != http.StatusOK || e.res.count("later") != 2 {
			t.Fatal("404 cached past 2s")
		}
		e.res.fail("down", httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable, "x"))
		get("down")
		get("down")
		if e.res.count("down") != 2 {
			t.Fatal("503 was cached")
		}
	})
}

func TestNameCacheCustomTTLAndBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options{NameCacheTTL: time.Second, NotFoundTTL: time.Minute, NameCacheEntries: 2})
		e.publish("a", siteFiles)
		e.publish("b", siteFiles)
		e.publish("c", siteFiles)
		for _, n := range []string{"a", "b", "c", "a"} {
			e.do(http.MethodGet, "/n/"+n+"/")
		}
		if e.res.count("a") != 2 {
			t.Fatalf("a resolved %d times; the 2-entry cache should have evicted it", e.res.count("a"))
		}
		e.do(http.MethodGet, "/n/x/")
		time.Sleep(time.Second) // NotFoundTTL is capped at NameCacheTTL
		e.do(http.MethodGet, "/n/x/")
		if e.res.count("x") != 2 {
			t.Fatalf("x resolved %d times", e.res.count("x"))
		}
	})
}

func TestResolveSingleFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options{})
		e.publish("site", siteFiles)
		e.res.gate = make(chan struct{})
		var wg sync.WaitGroup
		ctx, cancelLeader := context.WithCancel(t.Context())
		results := make([]error, 4)
		for i := range results {
			c := t.Context()
			if i == 0 {
				c = ctx
			}
			wg.Go(func() {
				_, results[i] = e.s.resolve(c, "site")
			})
			synctest.Wait() // the first caller leads; the others join it
		}
		if n := e.res.count("site"); n != 1 {
			t.Fatalf("%d concurrent resolves, want 1", n)
		}
		cancelLeader() // the leader's call fails; followers retry under their own contexts
		synctest.Wait()
		close(e.res.gate)
		wg.Wait()
		if results[0] == nil {
			t.Fatal("cancelled leader succeeded")
		}
		for i, err := range results[1:] {
			if err != nil {
				t.Fatalf("follower %d: %v", i+1, err)
			}
		}
		if n := e.res.count("site"); n != 2 {
			t.Fatalf("%d resolves, want 2 (leader, then one retry)", n)
		}
	})
}

func TestManifestLRUBound(t *testing.T) {
	e := newEnv(t, Options{ManifestCacheBytes: 600})
	ids := map[string]store.ID{}
	for _, n := range []string{"a", "b", "c"} {
		ids[n] = e.publish(n, []file{{"index.html", n, "text/html"}})
	}
	for _, n := range []string{"a", "b", "c"} {
		e.do(http.MethodGet, "/n/"+n+"/")
	}
	entries, weight := e.s.manifests.Stats()
	if weight > 600 || entries != 2 {
		t.Fatalf("cache holds %d manifests, %d bytes", entries, weight)
	}
	if _, ok := e.s.manifests.Get(ids["a"]); ok {
		t.Fatal("least recently used manifest kept")
	}
	if _, ok := e.s.manifests.Get(ids["c"]); !ok {
		t.Fatal("newest manifest evicted")
	}
	v := e.met.Values()
	if v[`ron_gateway_site_manifest_cache_entries{role="gateway"}`] != float64(entries) ||
		v[`ron_gateway_site_manifest_cache_bytes{role="gateway"}`] != float64(weight) {
		t.Fatalf("cache gauges %v", v)
	}
}

func TestWeightedLRU(t *testing.T) {
	c := newWeightedLRU[string, int](10)
	if !c.Add("a", 1, 4) || !c.Add("b", 2, 4) {
		t.Fatal("add")
	}
	c.Get("a") // b is now least recently used
	c.Add("c", 3, 4)
	if _, ok := c.Get("b"); ok {
		t.Fatal("b not evicted")
	}
	if n, w := c.Stats(); n != 2 || w != 8 {
		t.Fatalf("stats %d %d", n, w)
	}
	if c.Add("huge", 9, 11) {
		t.Fatal("over-budget value stored")
	}
	c.Add("a", 10, 6) // replace: weight 6 + c's 4
	if v, _ := c.Get("a"); v != 10 {
		t.Fatal("replace")
	}
	if _, w := c.Stats(); w != 10 {
		t.Fatalf("weight %d", w)
	}
	c.SetMax(5)
	if n, w := c.Stats(); n != 0 || w != 0 {
		t.Fatalf("after SetMax(5): %d %d", n, w)
	}
	c.SetMax(-1)
	c.Add("z", 0, 0)
}

// fakeIndex implements indexapi.Client's Resolve; other methods are unused.
type fakeIndex struct {
	indexapi.Client
	ans indexapi.ResolveAnswer
	err error
}

func (f fakeIndex) Resolve(_ context.Context, key string, noCache bool) (indexapi.ResolveAnswer, error) {
	if noCache {
		panic("sites must not bypass the index cache")
	}
	return f.ans, f.err
}

func TestIndexResolver(t *testing.T) {
	id := idOf("x")
	got, err := IndexResolver(fakeIndex{ans: indexapi.ResolveAnswer{Key: "site", Target: id.String()}}).Resolve(t.Context(), "site")
	if err != nil || got != id {
		t.Fatalf("Resolve = %v, %v", got, err)
	}
	_, err = IndexResolver(fakeIndex{ans: indexapi.ResolveAnswer{Target: "b3:zz"}}).Resolve(t.Context(), "site")
	if he := httpx.AsError(err); he.Status != http.StatusBadGateway {
		t.Fatalf("bad target: %v", err)
	}
	nf := httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "deleted")
	if _, err := IndexResolver(fakeIndex{err: nf}).Resolve(t.Context(), "site"); err != nf {
		t.Fatalf("error not passed through: %v", err)
	}
}

func TestUpstreamErrorMapping(t *testing.T) {
	for err, want := range map[error]int{
		context.DeadlineExceeded: http.StatusGatewayTimeout,
		context.Canceled:         http.StatusBadGateway,
		httpx.NewError(http.StatusServiceUnavailable, httpx.CodeBusy, "x"): http.StatusServiceUnavailable,
	} {
		if got := httpx.AsError(upstreamError(err)).Status; got != want {
			t.Fatalf("upstreamError(%v) = %d, want %d", err, got, want)
		}
	}
}

func TestIsTooLarge(t *testing.T) {
	for err, want := range map[error]bool{
		ErrTooLarge:              true,
		errors.Join(ErrTooLarge): true,
		httpx.NewError(http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge, "x"):                                   true,
		httpx.NewError(http.StatusBadGateway, httpx.CodeMalformed, "x").WithDetails(map[string]any{"reason": "too_large"}): true,
		httpx.NewError(http.StatusBadGateway, httpx.CodeMalformed, "x"):                                                    false,
		httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "x"):                                          false,
		errors.New("other"): false,
	} {
		if isTooLarge(err) != want {
			t.Fatalf("isTooLarge(%v) = %v", err, !want)
		}
	}
}
