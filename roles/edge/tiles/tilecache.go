package tiles

import (
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/ronhq/ron/roles/edge/packs"
	"github.com/ronhq/ron/roles/edge/tiletype"
)

// Tile body cache: warm tile hits are answered from memory, with no read
// of the pack and no per-request allocation for the body or its Content-Length
// and ETag values. It is keyed by pack id and tile id: the pack id changes
// whenever the file is replaced or rewritten (docs/edge.md §4.4), so an entry can never
// answer for another version of the pack, and entries of replaced packs
// simply age out.
const (
	// TileCacheBytes bounds the cache: bodies plus entryOverhead each.
	// There is no config key for it (docs/edge.md §10 has none); 16 MiB
	// holds the hot tiles of a typical map view many times over.
	TileCacheBytes = 16 << 20
	// maxCachedTile: larger tiles are read each time (1/64 of the budget,
	// 1/4 of a shard's).
	maxCachedTile = TileCacheBytes / 64
	// entryOverhead is what an entry costs besides its body.
	entryOverhead = 256
)

// tileKey identifies a tile of one version of a pack.
type tileKey struct {
	pack string // packs.Pack.ID
	id   uint64 // tile id
}

// cachedTile is a tile as stored (absent tiles too), with the header values
// that depend on it alone. It is immutable once cached and shared by
// concurrent responses: neither the body nor the slices may be modified.
type cachedTile struct {
	key    tileKey
	data   []byte // nil when absent
	coding tiletype.Coding
	found  bool
	etag   []string    // ETag when sent as stored
	length []string    // Content-Length of data
	ref    atomic.Bool // used since the clock hand last passed
}

// newCachedTile builds the entry of tile t of pack p.
func newCachedTile(p *packs.Pack, t packs.Tile) *cachedTile {
	return &cachedTile{key: tileKey{pack: p.ID(), id: t.ID}, data: t.Data, coding: t.Coding, found: t.Found,
		etag:   []string{tileETag(p.ID(), t.ID, t.Coding)},
		length: []string{strconv.Itoa(len(t.Data))}}
}

// etagFor is the entry's ETag value when sent with coding sent.
func (ct *cachedTile) etagFor(sent tiletype.Coding) []string {
	if sent == ct.coding {
		return ct.etag
	}
	return []string{tileETag(ct.key.pack, ct.key.id, sent)}
}

// cost is what the entry counts against the budget.
func (ct *cachedTile) cost() int64 { return int64(len(ct.data)) + entryOverhead }

// tileShards splits the cache so that hits on different tiles from several
// cores touch different locks.
const tileShards = 16

// tileCache is a byte-bounded cache of cachedTiles in tileShards shards by
// tile id, each with its share of the budget. Safe for concurrent use; no
// lock is held across I/O.
type tileCache struct {
	shards [tileShards]tileShard
}

func newTileCache(maxBytes int64) *tileCache {
	tc := &tileCache{}
	for i := range tc.shards {
		tc.shards[i] = tileShard{max: maxBytes / tileShards, byKey: map[tileKey]*cachedTile{}}
	}
	return tc
}

func (tc *tileCache) shard(k tileKey) *tileShard { return &tc.shards[k.id%tileShards] }

// get returns the cached tile k and marks it used.
func (tc *tileCache) get(k tileKey) (*cachedTile, bool) { return tc.shard(k).get(k) }

// put caches ct unless its body is too large, evicting entries over the
// budget. A concurrent put of the same key keeps the first.
func (tc *tileCache) put(ct *cachedTile) {
	if len(ct.data) > maxCachedTile {
		return
	}
	tc.shard(ct.key).put(ct)
}

// stats reports the entries and bytes counted (tests).
func (tc *tileCache) stats() (entries int, bytes int64) {
	for i := range tc.shards {
		sh := &tc.shards[i]
		sh.mu.RLock()
		entries, bytes = entries+len(sh.byKey), bytes+sh.bytes
		sh.mu.RUnlock()
	}
	return entries, bytes
}

// tileShard is one shard: CLOCK eviction (an approximation of least
// recently used). A hit only sets the entry's reference bit, under a read
// lock; a put sweeps the clock hand, clearing bits, until it finds an entry
// not used since its last pass and evicts it.
type tileShard struct {
	mu    sync.RWMutex
	max   int64
	bytes int64
	byKey map[tileKey]*cachedTile
	ring  []*cachedTile // the clock
	hand  int
}

func (sh *tileShard) get(k tileKey) (*cachedTile, bool) {
	sh.mu.RLock()
	ct := sh.byKey[k]
	sh.mu.RUnlock()
	if ct == nil {
		return nil, false
	}
	if !ct.ref.Load() {
		ct.ref.Store(true)
	}
	return ct, true
}

func (sh *tileShard) put(ct *cachedTile) {
	if ct.cost() > sh.max {
		return
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.byKey[ct.key] != nil {
		return
	}
	ct.ref.Store(true)
	sh.byKey[ct.key] = ct
	sh.ring = append(sh.ring, ct)
	sh.bytes += ct.cost()
	for sh.bytes > sh.max {
		sh.evictLocked()
	}
}

// evictLocked removes one entry: the first the hand finds unused since its
// last pass (at most two turns).
func (sh *tileShard) evictLocked() {
	for {
		if sh.hand >= len(sh.ring) {
			sh.hand = 0
		}
		e := sh.ring[sh.hand]
		if e.ref.Load() {
			e.ref.Store(false)
			sh.hand++
			continue
		}
		sh.ring = slices.Delete(sh.ring, sh.hand, sh.hand+1) // keeps the order; the hand moves on
		delete(sh.byKey, e.key)
		sh.bytes -= e.cost()
		return
	}
}
