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
	return int64(entryOverhead + len(s.ContentType) + 32*len(s.Chunks))
}

func (c *sidecarCache) get(id store.ID) (*store.Sidecar, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Get(id)
}

// add caches s unless it alone exceeds the bound, evicting the oldest
// entries until the total fits.
func (c *sidecarCache) add(s *store.Sidecar) {
	n := cost(s)
	if n > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(s.Digest)
	c.lru.Add(s.Digest, s)
	c.bytes += n
	for c.bytes > c.max {
		c.lru.RemoveOldest()
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
