package cache

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/internal/testclock"
	"github.com/ronhq/ron/runtime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newClock is a test clock at 2030-01-01.
func newClock() *testclock.Clock { return testclock.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) }

func newCache(t *testing.T, cfg Config) (*Cache[string], *testclock.Clock) {
	t.Helper()
	clk := newClock()
	if cfg.Now == nil {
		cfg.Now = clk.Now
	}
	c, err := New[string](cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, clk
}

func expect(t *testing.T, c *Cache[string], k Key, wantV string, wantR Result) {
	t.Helper()
	v, r := c.Get(k)
	if v != wantV || r != wantR {
		t.Fatalf("Get(%s) = %q, %s; want %q, %s", k, v, r, wantV, wantR)
	}
}

func TestHitMissNegative(t *testing.T) {
	c, _ := newCache(t, Config{})
	expect(t, c, NameKey("a.example"), "", Miss)
	c.Put(NameKey("a.example"), "A")
	expect(t, c, NameKey("a.example"), "A", Hit)
	// Key spaces are distinct.
	expect(t, c, ResolveKey("a.example"), "", Miss)
	c.PutNegative(ProvidersKey("b3:x"))
	expect(t, c, ProvidersKey("b3:x"), "", Negative)
	c.PutEmpty(ProvidersKey("b3:y"), "[]")
	expect(t, c, ProvidersKey("b3:y"), "[]", Hit)
	// A Put replaces a negative entry and vice versa.
	c.Put(ProvidersKey("b3:x"), "P")
	expect(t, c, ProvidersKey("b3:x"), "P", Hit)
	c.PutNegative(NameKey("a.example"))
	expect(t, c, NameKey("a.example"), "", Negative)

	s := c.Stats()
	want := Stats{Hits: 5, NegativeHits: 2, Misses: 2, Entries: 3}
	if s != want {
		t.Fatalf("Stats = %+v, want %+v", s, want)
	}
}

func TestExpiryExactlyAtTTL(t *testing.T) {
	c, clk := newCache(t, Config{TTL: 10 * time.Second, NegTTL: 2 * time.Second})
	c.Put(NameKey("pos"), "v")
	c.PutNegative(NameKey("neg"))
	c.PutEmpty(NameKey("empty"), "[]")

	clk.Advance(2*time.Second - time.Nanosecond)
	expect(t, c, NameKey("neg"), "", Negative)
	expect(t, c, NameKey("empty"), "[]", Hit)
	clk.Advance(time.Nanosecond) // exactly neg_cache_ttl
	expect(t, c, NameKey("neg"), "", Miss)
	expect(t, c, NameKey("empty"), "", Miss)
	expect(t, c, NameKey("pos"), "v", Hit)

	clk.Advance(8*time.Second - time.Nanosecond)
	expect(t, c, NameKey("pos"), "v", Hit)
	clk.Advance(time.Nanosecond) // exactly cache_ttl
	expect(t, c, NameKey("pos"), "", Miss)

	if s := c.Stats(); s.Expired != 3 || s.Entries != 0 {
		t.Fatalf("Stats = %+v, want 3 expired, 0 entries", s)
	}
	// A re-Put restarts the TTL.
	c.Put(NameKey("pos"), "w")
	clk.Advance(9 * time.Second)
	expect(t, c, NameKey("pos"), "w", Hit)
}

// TestExpirySynctest runs expiry against the real time package inside a
// synctest bubble (virtual time; no real waiting).
func TestExpirySynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := New[string](Config{})
		if err != nil {
			t.Fatal(err)
		}
		c.Put(ResolveKey("k"), "v")
		c.PutNegative(ResolveKey("n"))
		time.Sleep(DefaultNegTTL)
		expect(t, c, ResolveKey("n"), "", Miss)
		expect(t, c, ResolveKey("k"), "v", Hit)
		time.Sleep(DefaultTTL - DefaultNegTTL)
		expect(t, c, ResolveKey("k"), "", Miss)
	})
}

func TestLRUEvictionOrder(t *testing.T) {
	c, _ := newCache(t, Config{Entries: 3})
	c.Put(NameKey("a"), "a")
	c.Put(NameKey("b"), "b")
	c.PutNegative(NameKey("c"))
	expect(t, c, NameKey("a"), "a", Hit) // a is now most recent; b is oldest
	c.Put(NameKey("d"), "d")
	expect(t, c, NameKey("b"), "", Miss)
	// Order now (oldest first): c, a, d. Updating c refreshes it.
	c.Put(NameKey("c"), "c")
	c.Put(NameKey("e"), "e") // evicts a
	expect(t, c, NameKey("a"), "", Miss)
	for _, k := range []string{"c", "d", "e"} {
		expect(t, c, NameKey(k), k, Hit)
	}
	if s := c.Stats(); s.Evictions != 2 || s.Entries != 3 {
		t.Fatalf("Stats = %+v, want 2 evictions, 3 entries", s)
	}
	// Shrinking evicts the least recently used (c, then d).
	if err := c.Reconfigure(Config{Entries: 1}); err != nil {
		t.Fatal(err)
	}
	expect(t, c, NameKey("e"), "e", Hit)
	expect(t, c, NameKey("d"), "", Miss)
	if s := c.Stats(); s.Evictions != 4 || s.Entries != 1 {
		t.Fatalf("Stats = %+v, want 4 evictions, 1 entry", s)
	}
}

func TestInvalidate(t *testing.T) {
	c, _ := newCache(t, Config{})
	put := func(ks ...Key) {
		for _, k := range ks {
			c.Put(k, k.String())
		}
	}
	put(NameKey("blog.example"), ResolveKey("blog.example"), ResolveKey("blog.example@7"),
		ResolveKey("blog.example@6"), NameKey("other.example"), ResolveKey("other.example@1"),
		ProvidersKey("b3:aa"), ResolveKey("b3:aa"), ProvidersKey("b3:bb"), ResolveKey("b3:bb"))

	c.Invalidate(NameKey("other.example"), NameKey("absent"))
	expect(t, c, NameKey("other.example"), "", Miss)

	c.InvalidateName("blog.example")
	for _, k := range []Key{NameKey("blog.example"), ResolveKey("blog.example"),
		ResolveKey("blog.example@7"), ResolveKey("blog.example@6")} {
		expect(t, c, k, "", Miss)
	}
	expect(t, c, ResolveKey("other.example@1"), "r:other.example@1", Hit)

	c.InvalidateObject("b3:aa")
	expect(t, c, ProvidersKey("b3:aa"), "", Miss)
	expect(t, c, ResolveKey("b3:aa"), "", Miss)
	expect(t, c, ProvidersKey("b3:bb"), "p:b3:bb", Hit)
	expect(t, c, ResolveKey("b3:bb"), "r:b3:bb", Hit)

	if s := c.Stats(); s.Invalidations != 7 {
		t.Fatalf("Invalidations = %d, want 7", s.Invalidations)
	}
	// Negative entries are invalidated too (a local PUT creates the name).
	c.PutNegative(NameKey("new.example"))
	c.InvalidateName("new.example")
	expect(t, c, NameKey("new.example"), "", Miss)

	c.Purge()
	if n := c.Len(); n != 0 {
		t.Fatalf("Len after Purge = %d", n)
	}
}

// TestVersionedIndexBounded checks that the name → r:name@V index follows
// the LRU (evictions, expiry, invalidation) and does not grow past it.
func TestVersionedIndexBounded(t *testing.T) {
	c, clk := newCache(t, Config{Entries: 4})
	for v := range 100 {
		c.Put(ResolveKey(fmt.Sprintf("n%d.example@%d", v%7, v)), "x")
	}
	count := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := 0
		for _, ids := range c.versioned {
			n += len(ids)
		}
		return n
	}
	if n := count(); n != 4 {
		t.Fatalf("versioned index holds %d ids, want 4", n)
	}
	clk.Advance(DefaultTTL)
	for v := 96; v < 100; v++ {
		expect(t, c, ResolveKey(fmt.Sprintf("n%d.example@%d", v%7, v)), "", Miss)
	}
	if n := count(); n != 0 || len(c.versioned) != 0 {
		t.Fatalf("versioned index holds %d ids in %d names after expiry", n, len(c.versioned))
	}
	c.Put(ResolveKey("a@1"), "x")
	c.InvalidateName("a")
	if len(c.versioned) != 0 {
		t.Fatalf("versioned index not emptied by InvalidateName: %v", c.versioned)
	}
}

func TestMetrics(t *testing.T) {
	m := runtime.NewMetrics(nil)
	c, clk := newCache(t, Config{Entries: 2, Metrics: m})
	val := func(series string) float64 {
		t.Helper()
		v, ok := m.Values()[series]
		if !ok {
			t.Fatalf("series %s not exported; have %v", series, m.Values())
		}
		return v
	}
	if got := val(`ron_index_cache_hits_total{role="index",cache="resolve"}`); got != 0 {
		t.Fatalf("fresh hits = %v", got)
	}
	if got := val(`ron_index_cache_hit_ratio{role="index"}`); got != 0 {
		t.Fatalf("fresh ratio = %v", got)
	}

	c.Get(NameKey("a"))              // miss
	c.Put(NameKey("a"), "a")         //
	c.Get(NameKey("a"))              // hit
	c.PutNegative(ProvidersKey("p")) //
	c.Get(ProvidersKey("p"))         // negative hit
	c.Get(ResolveKey("r"))           // miss
	c.Put(ResolveKey("r"), "r")      // evicts n:a

	for series, want := range map[string]float64{
		`ron_index_cache_hits_total{role="index",cache="name"}`:        1,
		`ron_index_cache_misses_total{role="index",cache="name"}`:      1,
		`ron_index_cache_hits_total{role="index",cache="providers"}`:   1,
		`ron_index_cache_misses_total{role="index",cache="providers"}`: 0,
		`ron_index_cache_hits_total{role="index",cache="resolve"}`:     0,
		`ron_index_cache_misses_total{role="index",cache="resolve"}`:   1,
		`ron_index_cache_entries{role="index"}`:                        2,
		`ron_index_cache_hit_ratio{role="index"}`:                      0.5,
	} {
		if got := val(series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}

	// The ratio only covers the last 5 minutes.
	clk.Advance(4 * time.Minute)
	c.Get(ProvidersKey("p")) // expired: miss
	if got := val(`ron_index_cache_hit_ratio{role="index"}`); got != 0.4 {
		t.Errorf("ratio after 4 min = %v, want 0.4", got)
	}
	clk.Advance(90 * time.Second)
	if got := val(`ron_index_cache_hit_ratio{role="index"}`); got != 0 {
		t.Errorf("ratio after 5.5 min = %v, want 0 (only the miss, hits aged out)", got)
	}
	if got := c.HitRatio(); got != 0 {
		t.Errorf("HitRatio = %v", got)
	}
	clk.Advance(5 * time.Minute)
	c.Put(NameKey("z"), "z")
	c.Get(NameKey("z"))
	if got := val(`ron_index_cache_hit_ratio{role="index"}`); got != 1 {
		t.Errorf("ratio after fresh hit = %v, want 1", got)
	}
}

func TestNilMetricsAndConfig(t *testing.T) {
	c, err := New[int](Config{})
	if err != nil {
		t.Fatal(err)
	}
	c.Put(NameKey("x"), 1)
	if v, r := c.Get(NameKey("x")); v != 1 || r != Hit {
		t.Fatalf("Get = %v, %v", v, r)
	}
	for _, bad := range []Config{{Entries: -1}, {TTL: -1}, {NegTTL: -time.Second}} {
		if _, err := New[int](bad); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
		if err := c.Reconfigure(bad); err == nil {
			t.Errorf("Reconfigure(%+v) accepted", bad)
		}
	}
	// New TTLs apply to later Puts only.
	clk := newClock()
	c2, _ := New[int](Config{Now: clk.Now, TTL: time.Second})
	c2.Put(NameKey("old"), 1)
	if err := c2.Reconfigure(Config{TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	c2.Put(NameKey("new"), 2)
	clk.Advance(time.Second)
	if _, r := c2.Get(NameKey("old")); r != Miss {
		t.Errorf("old entry = %v, want miss", r)
	}
	if _, r := c2.Get(NameKey("new")); r != Hit {
		t.Errorf("new entry = %v, want hit", r)
	}
}

func TestConcurrent(t *testing.T) {
	m := runtime.NewMetrics(nil)
	c, clk := newCache(t, Config{Entries: 64, Metrics: m})
	var wg sync.WaitGroup
	const workers, ops = 8, 2000
	for w := range workers {
		wg.Go(func() {
			for i := range ops {
				k := ResolveKey(fmt.Sprintf("n%d@%d", i%13, i%101))
				switch (i + w) % 9 {
				case 0:
					c.PutNegative(k)
				case 1:
					c.InvalidateName(fmt.Sprintf("n%d", i%13))
				case 2:
					c.InvalidateObject(k.ID)
				case 3:
					clk.Advance(time.Second)
				case 4:
					_ = m.Values() // gauge callbacks take the lock
				case 5:
					_ = c.Stats()
				case 6, 7:
					c.Put(k, k.ID)
				default:
					if v, r := c.Get(k); r == Hit && v != k.ID {
						t.Errorf("Get(%s) = %q", k, v)
					}
				}
			}
		})
	}
	wg.Wait()
	s := c.Stats()
	if s.Entries > 64 {
		t.Fatalf("Entries = %d over capacity", s.Entries)
	}
	hits := m.Values()[`ron_index_cache_hits_total{role="index",cache="resolve"}`]
	misses := m.Values()[`ron_index_cache_misses_total{role="index",cache="resolve"}`]
	if uint64(hits) != s.Hits || uint64(misses) != s.Misses {
		t.Fatalf("metrics %v/%v disagree with stats %+v", hits, misses, s)
	}
	// The versioned index holds only ids still in the LRU.
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, ids := range c.versioned {
		for id := range ids {
			if !c.lru.Contains(ResolveKey(id)) {
				t.Errorf("index holds %s (name %s) not in the LRU", id, name)
			}
		}
	}
}

func TestStrings(t *testing.T) {
	for k, want := range map[Key]string{
		NameKey("a"): "n:a", ProvidersKey("b3:x"): "p:b3:x", ResolveKey("a@1"): "r:a@1", {ID: "z"}: "?:z",
	} {
		if k.String() != want {
			t.Errorf("%v.String() = %q, want %q", k, k.String(), want)
		}
	}
	if Space(0).String() != "unknown" || Miss.String() != "miss" || Hit.String() != "hit" || Negative.String() != "negative" {
		t.Error("String values")
	}
}
