package fs

import (
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/ronhq/ron/store"
)

// entryOverhead approximates the bookkeeping bytes of one cache entry.
const entryOverhead = 160

// sidecarCache is an LRU of parsed sidecars bounded by their size in bytes.
// Its mutex is held only for map/list operations, never across I/O.
type sidecarCache struct {
	mu    sync.Mutex
	lru   *simplelru.LRU[store.ID, *store.Sidecar]
	bytes int64
	max   int64
}

func newSidecarCache(max int64) *sidecarCache {
	c := &sidecarCache{max: max}
	// The entry count is not the bound; bytes are (see add).
	l, err := simplelru.NewLRU[store.ID, *store.Sidecar](1<<30, func(_ store.ID, s *store.Sidecar) {
		c.bytes -= cost(s)
	})
	if err != nil {
		panic(err) // only for a non-positive size
	}
	c.lru = l
	return c
}

func cost(s *store.Sidecar) int64 {
	return int64(entryOverhead + len(s.ContentType) + s.TreeLen())
}

func (c *sidecarCache) get(id store.ID) (*store.Sidecar, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Get(id)
}

// add caches s in place of any entry for its object (unless s alone
// exceeds the bound: then the object is only dropped), evicting the
// oldest entries until the total fits. A v1 sidecar never replaces a
// cached v2 one: a read that loaded the v1 file just before an upgrade
// renamed the v2 one over it must not undo the upgrade in the cache.
func (c *sidecarCache) add(s *store.Sidecar) {
	n := cost(s)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.lru.Peek(s.Digest); ok && old.Version > s.Version {
		return
	}
	c.lru.Remove(s.Digest)
	if n > c.max {
		return
	}
	c.lru.Add(s.Digest, s)
	c.bytes += n
	for c.bytes > c.max {
		c.lru.RemoveOldest()
	}
}

// dropV1 removes id's entry when it is a v1 sidecar: the file on disk was
// upgraded after the entry was loaded.
func (c *sidecarCache) dropV1(id store.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.lru.Peek(id); ok && old.Version == store.SidecarV1 {
		c.lru.Remove(id)
	}
}

func (c *sidecarCache) remove(id store.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(id)
}

func (c *sidecarCache) purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Purge()
}

func (c *sidecarCache) size() (entries int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes
}
