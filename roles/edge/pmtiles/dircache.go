package pmtiles

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
)

// DefaultDirCacheBytes is the default DirCache budget (dir_cache_bytes).
const DefaultDirCacheBytes = 64 << 20

// privateCacheBytes is the budget of the cache a Reader makes for itself
// when Options.Cache is nil.
const privateCacheBytes = 4 << 20

// DirCache is an LRU of decoded leaf directories keyed by (pack id, offset,
// length), shared by any number of Readers. Its budget counts EntryBytes per
// entry (a directory larger than the whole budget is returned but not kept).
// Concurrent loads of one key are coalesced: the first caller decodes, the
// others wait for its result (each within its own context) without any
// goroutine being started. Failed loads are not cached. Safe for concurrent
// use; the lock is never held across I/O.
type DirCache struct {
	mu       sync.Mutex
	maxBytes int64
	used     int64
	lru      list.List // of *dirItem, most recently used first
	items    map[dirKey]*list.Element
	loading  map[dirKey]*dirLoad
	anon     uint64
	stats    DirCacheStats
	onLookup func(hit bool)
}

// DirCacheOptions configures a DirCache.
type DirCacheOptions struct {
	// MaxBytes is the budget; ≤ 0 means DefaultDirCacheBytes.
	MaxBytes int64
	// OnLookup, when set, is called once per lookup (outside the lock):
	// hit = true when the directory was cached or another caller's load
	// delivered it, false when this lookup decoded it. The edge feeds
	// ron_edge_dir_cache_lookups_total{result} from it.
	OnLookup func(hit bool)
}

// DirCacheStats is a snapshot of a DirCache.
type DirCacheStats struct {
	Bytes       int64  // budget bytes in use
	Directories int    // cached directories
	Hits        uint64 // lookups served from the cache or a coalesced load
	Misses      uint64 // lookups that decoded
	Evictions   uint64 // directories dropped for the budget
}

type dirKey struct {
	pack   string
	offset uint64
	length uint32
}

type dirItem struct {
	key     dirKey
	entries []Entry
	cost    int64
}

// dirLoad is one in-progress load; done closes once entries/err are set.
type dirLoad struct {
	done    chan struct{}
	entries []Entry
	err     error
}

// NewDirCache returns an empty cache.
func NewDirCache(opt DirCacheOptions) *DirCache {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultDirCacheBytes
	}
	return &DirCache{
		maxBytes: opt.MaxBytes,
		items:    make(map[dirKey]*list.Element),
		loading:  make(map[dirKey]*dirLoad),
		onLookup: opt.OnLookup,
	}
}

// SetMaxBytes changes the budget (≤ 0 means DefaultDirCacheBytes), evicting
// at once when it shrinks.
func (c *DirCache) SetMaxBytes(n int64) {
	if n <= 0 {
		n = DefaultDirCacheBytes
	}
	c.mu.Lock()
	c.maxBytes = n
	c.evictLocked()
	c.mu.Unlock()
}

// Purge drops every cached directory of pack (for example when the pack is
// unmounted). Loads in progress are not affected.
func (c *DirCache) Purge(pack string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, el := range c.items {
		if k.pack == pack {
			c.removeLocked(el)
		}
	}
}

// Stats returns a snapshot of the cache's counters.
func (c *DirCache) Stats() DirCacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Bytes, s.Directories = c.used, len(c.items)
	return s
}

// anonID returns a pack id unique within this cache for readers opened
// without one.
func (c *DirCache) anonID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.anon++
	return fmt.Sprintf("\x00anon-%d", c.anon)
}

// get returns the directory for key from the cache, from a load already in
// progress, or by calling load. A waiter whose leader failed only because
// the leader's context ended tries again itself.
func (c *DirCache) get(ctx context.Context, key dirKey, load func() ([]Entry, error)) ([]Entry, error) {
	for {
		c.mu.Lock()
		if el, ok := c.items[key]; ok {
			c.lru.MoveToFront(el)
			es := el.Value.(*dirItem).entries
			c.stats.Hits++
			c.mu.Unlock()
			c.report(true)
			return es, nil
		}
		if l, ok := c.loading[key]; ok {
			c.mu.Unlock()
			es, retry, err := c.wait(ctx, l)
			if retry {
				continue
			}
			return es, err
		}
		l := &dirLoad{done: make(chan struct{})}
		c.loading[key] = l
		c.stats.Misses++
		c.mu.Unlock()
		c.report(false)
		return c.lead(key, l, load)
	}
}

// wait blocks until l finishes or ctx ends.
func (c *DirCache) wait(ctx context.Context, l *dirLoad) (es []Entry, retry bool, err error) {
	select {
	case <-l.done:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	if l.err != nil && isContextErr(l.err) && ctx.Err() == nil {
		return nil, true, nil
	}
	if l.err == nil {
		c.mu.Lock()
		c.stats.Hits++
		c.mu.Unlock()
		c.report(true)
	}
	return l.entries, false, l.err
}

// lead runs load for key and publishes the result to l's waiters. If load
// panics, the waiters get an error and the panic goes on up the leader's
// stack.
func (c *DirCache) lead(key dirKey, l *dirLoad, load func() ([]Entry, error)) (es []Entry, err error) {
	defer func() {
		p := recover()
		if p != nil {
			es, err = nil, fmt.Errorf("pmtiles: directory load panicked: %v", p)
		}
		c.mu.Lock()
		delete(c.loading, key)
		if err == nil {
			c.addLocked(key, es)
		}
		c.mu.Unlock()
		l.entries, l.err = es, err
		close(l.done)
		if p != nil {
			panic(p)
		}
	}()
	return load()
}

func (c *DirCache) addLocked(key dirKey, es []Entry) {
	cost := int64(max(len(es), 1)) * EntryBytes
	if cost > c.maxBytes {
		return
	}
	if el, ok := c.items[key]; ok {
		c.removeLocked(el)
	}
	c.items[key] = c.lru.PushFront(&dirItem{key: key, entries: es, cost: cost})
	c.used += cost
	c.evictLocked()
}

func (c *DirCache) evictLocked() {
	for c.used > c.maxBytes {
		el := c.lru.Back()
		if el == nil {
			return
		}
		c.removeLocked(el)
		c.stats.Evictions++
	}
}

func (c *DirCache) removeLocked(el *list.Element) {
	it := c.lru.Remove(el).(*dirItem)
	delete(c.items, it.key)
	c.used -= it.cost
}

func (c *DirCache) report(hit bool) {
	if c.onLookup != nil {
		c.onLookup(hit)
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
