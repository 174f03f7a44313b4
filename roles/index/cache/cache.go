// Package cache is the index role's answer cache (docs/index.md §7): one
// bounded LRU of cache_entries entries over three key spaces — peer name
// answers (n:), peer provider answers (p:) and encoded resolve responses
// (r:) — with per-entry expiry. Positive answers live cache_ttl, negative
// (not found) and empty-provider answers neg_cache_ttl; an expired entry is
// never served. Local writes invalidate at once (InvalidateName,
// InvalidateObject).
//
// What is cached is the caller's decision and the caller's duty: errors,
// timeouts and partial answers must not be Put, and a request with
// Cache-Control: no-cache must not call Get.
//
// The cache is safe for concurrent use. Its one mutex guards only in-memory
// state: it is never held across I/O, a channel operation, a metrics call or
// the injected clock.
package cache

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/runtime"
)

// Defaults from docs/index.md §12.
const (
	DefaultEntries = 100_000
	DefaultTTL     = 10 * time.Second
	DefaultNegTTL  = 2 * time.Second
)

// Space is one of the cache's three key spaces.
type Space uint8

// The key spaces of docs/index.md §7. Their String values are the `cache` label of
// ron_index_cache_hits_total and ron_index_cache_misses_total.
const (
	Name      Space = iota + 1 // n:<name>, peer name answers
	Providers                  // p:<b3>, peer provider answers
	Resolve                    // r:<key>, encoded resolve responses
)

// String returns the metric label: "name", "providers" or "resolve".
func (s Space) String() string {
	switch s {
	case Name:
		return "name"
	case Providers:
		return "providers"
	case Resolve:
		return "resolve"
	}
	return "unknown"
}

// Key identifies one entry: a key space and the id within it (a name, a
// "b3:…" digest, or a resolve key: name, name@version or b3).
type Key struct {
	Space Space
	ID    string
}

// NameKey is n:<name>.
func NameKey(name string) Key { return Key{Name, name} }

// ProvidersKey is p:<b3>.
func ProvidersKey(b3 string) Key { return Key{Providers, b3} }

// ResolveKey is r:<key>, key as in GET /resolve/{key}.
func ResolveKey(key string) Key { return Key{Resolve, key} }

// String renders the key as the spec writes it ("n:blog.example").
func (k Key) String() string {
	switch k.Space {
	case Name:
		return "n:" + k.ID
	case Providers:
		return "p:" + k.ID
	case Resolve:
		return "r:" + k.ID
	}
	return "?:" + k.ID
}

// Result says what Get found.
type Result uint8

const (
	// Miss: no entry, or only an expired one (which Get drops).
	Miss Result = iota
	// Hit: an unexpired positive entry; the value is returned.
	Hit
	// Negative: an unexpired not-found entry (PutNegative); the value is
	// the zero V. Callers answer 404 without asking peers.
	Negative
)

// String returns "miss", "hit" or "negative".
func (r Result) String() string {
	switch r {
	case Hit:
		return "hit"
	case Negative:
		return "negative"
	}
	return "miss"
}

// Config sets up a Cache. Zero fields take the docs/index.md §12 defaults.
type Config struct {
	Entries int           // capacity in entries (cache_entries)
	TTL     time.Duration // positive entries (cache_ttl)
	NegTTL  time.Duration // negative and empty answers (neg_cache_ttl)

	// Now is the clock; nil means time.Now. It is never called with the
	// cache's lock held.
	Now func() time.Time

	// Metrics, when non-nil, receives the docs/index.md §13 cache metrics (see New).
	Metrics *runtime.Metrics
}

// ErrConfig reports an invalid Config (a negative capacity or TTL).
var ErrConfig = errors.New("cache: invalid config")

func (c Config) withDefaults() (Config, error) {
	if c.Entries < 0 || c.TTL < 0 || c.NegTTL < 0 {
		return c, ErrConfig
	}
	if c.Entries == 0 {
		c.Entries = DefaultEntries
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.NegTTL == 0 {
		c.NegTTL = DefaultNegTTL
	}
	return c, nil
}

// entry is one cached answer with its own deadline.
type entry[V any] struct {
	val      V
	negative bool
	expires  time.Time // served only while now is before expires
}

// Stats is a snapshot of the cache's counters since New. Hits include
// NegativeHits. Evictions counts entries pushed out by capacity (not
// expiry, not invalidation); Expired counts expired entries dropped by Get.
type Stats struct {
	Hits, NegativeHits, Misses uint64
	Evictions, Expired         uint64
	Invalidations              uint64
	Entries                    int
}

// Cache is the bounded, expiring LRU. Create it with New.
type Cache[V any] struct {
	now func() time.Time
	// hits and misses are the docs/index.md §13 counters by Space; nil without Metrics.
	hits, misses [Resolve + 1]*metrics.Counter

	mu     sync.Mutex
	lru    *simplelru.LRU[Key, entry[V]]
	ttl    time.Duration
	negTTL time.Duration
	// versioned maps a name to its cached r:<name>@<version> ids, so that a
	// write to the name drops them too.
	versioned map[string]map[string]struct{}
	stats     Stats
	window    ratioWindow
}

// New builds a Cache. With cfg.Metrics set it registers, all with
// role="index":
//
//	ron_index_cache_hits_total{cache}    counter (positive and negative hits)
//	ron_index_cache_misses_total{cache}  counter (absent or expired)
//	ron_index_cache_entries              gauge (entries held, expired ones included until touched)
//	ron_index_cache_hit_ratio            gauge (hits/(hits+misses) over the last 5 min; 0 with no lookups)
//
// cache is "name", "providers" or "resolve". Gauges are callbacks; a newer
// Cache on the same Metrics takes them over.
func New[V any](cfg Config) (*Cache[V], error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Cache[V]{
		now:       cfg.Now,
		ttl:       cfg.TTL,
		negTTL:    cfg.NegTTL,
		versioned: map[string]map[string]struct{}{},
	}
	if c.now == nil {
		c.now = time.Now
	}
	c.lru, err = simplelru.NewLRU(cfg.Entries, c.onRemove)
	if err != nil {
		return nil, err
	}
	if m := cfg.Metrics; m != nil {
		for _, s := range []Space{Name, Providers, Resolve} {
			c.hits[s] = m.Counter("index_cache_hits_total", "role", role, "cache", s.String())
			c.misses[s] = m.Counter("index_cache_misses_total", "role", role, "cache", s.String())
		}
		m.Gauge("index_cache_entries", func() float64 { return float64(c.Len()) }, "role", role)
		m.Gauge("index_cache_hit_ratio", func() float64 { return c.HitRatio() }, "role", role)
	}
	return c, nil
}

const role = indexapi.RoleName

// onRemove is the LRU's callback for every entry leaving it (eviction,
// Remove, Resize). It runs with c.mu held and only touches c's maps.
func (c *Cache[V]) onRemove(k Key, _ entry[V]) {
	if name, ok := versionedName(k); ok {
		if ids := c.versioned[name]; ids != nil {
			delete(ids, k.ID)
			if len(ids) == 0 {
				delete(c.versioned, name)
			}
		}
	}
}

// versionedName returns name for r:<name>@<version>.
func versionedName(k Key) (string, bool) {
	if k.Space != Resolve {
		return "", false
	}
	name, _, ok := strings.Cut(k.ID, "@")
	return name, ok
}

// Get returns the unexpired entry for k: (v, Hit), (zero, Negative) or
// (zero, Miss). A hit makes k the most recently used; an expired entry is
// removed and reported as a Miss. An entry is expired from the instant
// now >= put time + its TTL.
func (c *Cache[V]) Get(k Key) (V, Result) {
	now := c.now()
	var zero V
	res := Miss

	c.mu.Lock()
	e, ok := c.lru.Get(k)
	switch {
	case !ok:
		c.stats.Misses++
	case !now.Before(e.expires):
		c.lru.Remove(k)
		c.stats.Expired++
		c.stats.Misses++
	case e.negative:
		res = Negative
		c.stats.Hits++
		c.stats.NegativeHits++
	default:
		res = Hit
		zero = e.val
		c.stats.Hits++
	}
	c.window.add(now, res != Miss)
	c.mu.Unlock()

	if k.Space <= Resolve {
		ctr := c.misses[k.Space]
		if res != Miss {
			ctr = c.hits[k.Space]
		}
		if ctr != nil {
			ctr.Inc()
		}
	}
	return zero, res
}

// Put caches a positive answer for cache_ttl, replacing any entry for k.
func (c *Cache[V]) Put(k Key, v V) { c.put(k, v, false, false) }

// PutEmpty caches a positive but empty answer (a provider list with no
// records) for neg_cache_ttl: Get returns it as a Hit.
func (c *Cache[V]) PutEmpty(k Key, v V) { c.put(k, v, false, true) }

// PutNegative caches "not found" for neg_cache_ttl: Get returns Negative.
func (c *Cache[V]) PutNegative(k Key) {
	var zero V
	c.put(k, zero, true, true)
}

func (c *Cache[V]) put(k Key, v V, negative, short bool) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	ttl := c.ttl
	if short {
		ttl = c.negTTL
	}
	if c.lru.Add(k, entry[V]{val: v, negative: negative, expires: now.Add(ttl)}) {
		c.stats.Evictions++
	}
	if name, ok := versionedName(k); ok {
		ids := c.versioned[name]
		if ids == nil {
			ids = map[string]struct{}{}
			c.versioned[name] = ids
		}
		ids[k.ID] = struct{}{}
	}
}

// Invalidate drops the given keys at once; absent keys are ignored.
func (c *Cache[V]) Invalidate(keys ...Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		if c.lru.Remove(k) {
			c.stats.Invalidations++
		}
	}
}

// InvalidateName drops what a local PUT or DELETE of name makes stale:
// n:<name>, r:<name> and every r:<name>@<version>.
func (c *Cache[V]) InvalidateName(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := []Key{NameKey(name), ResolveKey(name)}
	for id := range c.versioned[name] {
		keys = append(keys, ResolveKey(id))
	}
	for _, k := range keys {
		if c.lru.Remove(k) { // onRemove updates c.versioned
			c.stats.Invalidations++
		}
	}
}

// InvalidateObject drops what a local POST /providers for b3 makes stale:
// p:<b3> and r:<b3>. Call it once per b3 in the request.
func (c *Cache[V]) InvalidateObject(b3 string) {
	c.Invalidate(ProvidersKey(b3), ResolveKey(b3))
}

// Reconfigure applies a hot-reloaded config: the capacity changes at once
// (evicting the least recently used entries if it shrinks), the TTLs apply
// to later Puts. Zero fields take the docs/index.md §12 defaults; Now and Metrics are
// ignored.
func (c *Cache[V]) Reconfigure(cfg Config) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.Evictions += uint64(c.lru.Resize(cfg.Entries))
	c.ttl, c.negTTL = cfg.TTL, cfg.NegTTL
	return nil
}

// Purge drops every entry (for example when caches are switched off).
func (c *Cache[V]) Purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.Invalidations += uint64(c.lru.Len())
	c.lru.Purge()
}

// Len is the number of entries held, expired ones included until a Get
// touches them or capacity pushes them out.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Stats returns a snapshot of the counters.
func (c *Cache[V]) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Entries = c.lru.Len()
	return s
}

// HitRatio is hits/(hits+misses) over the last 5 minutes by the injected
// clock (to the resolution of one 10 s bucket), 0 when there were none.
func (c *Cache[V]) HitRatio() float64 {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.window.ratio(now)
}

// Hit-ratio window: ratioBuckets buckets of ratioBucket each.
const (
	ratioBucket  = 10 * time.Second
	ratioBuckets = 30 // 5 min
)

// ratioWindow counts hits and lookups per 10 s bucket over 5 minutes. Each
// bucket remembers which period it holds, so stale ones are ignored or
// reset without a ticker.
type ratioWindow struct {
	b [ratioBuckets]struct {
		period      int64
		hits, total uint64
	}
}

func period(now time.Time) int64 { return now.UnixNano() / int64(ratioBucket) }

func (w *ratioWindow) add(now time.Time, hit bool) {
	p := period(now)
	b := &w.b[uint64(p)%ratioBuckets]
	if b.period != p {
		b.period, b.hits, b.total = p, 0, 0
	}
	b.total++
	if hit {
		b.hits++
	}
}

func (w *ratioWindow) ratio(now time.Time) float64 {
	p := period(now)
	var hits, total uint64
	for i := range w.b {
		if b := &w.b[i]; b.total > 0 && b.period > p-ratioBuckets && b.period <= p {
			hits += b.hits
			total += b.total
		}
	}
	if total == 0 {
		return 0
	}
	return float64(hits) / float64(total)
}
