package edgecache

import (
	"container/list"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/rs/zerolog"
	"go.etcd.io/bbolt"

	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
)

// Options configure a Cache.
type Options struct {
	Dir         string           // <data dir>/edge; "" = memory only (amnesia): nothing touches disk
	MaxBytes    int64            // budget: cache_max_bytes, or amnesia_cache_max_bytes in memory
	MaxVariants int              // per /assets key (max_variants, 16)
	Metrics     *runtime.Metrics // ron_edge_cache_bytes, ron_edge_cache_entries, ron_edge_cache_evictions_total (role="edge")
	Log         zerolog.Logger
	Now         func() time.Time // nil = time.Now
}

// DefaultMaxVariants is used when Options.MaxVariants (or SetLimits) is ≤ 0.
const DefaultMaxVariants = 16

// accessPersistInterval: an entry's access time is written to meta.db at
// most this often (docs/edge.md §8).
const accessPersistInterval = time.Minute

// Stats is a snapshot of the cache's size.
type Stats struct {
	Bytes   int64 // blob bytes (each blob once) plus stored header bytes
	Entries int64 // /o objects plus /assets variants
	Blobs   int64 // distinct blobs
}

// Cache is the edge cache store. All methods are safe for concurrent use.
type Cache struct {
	dir string
	log zerolog.Logger
	now func() time.Time
	db  *bbolt.DB // nil in memory mode

	evictions *metrics.Counter

	mu   sync.Mutex
	cond *sync.Cond // on mu: placing/deleting changes, db users leaving

	maxBytes    int64
	maxVariants int
	bytes       int64

	blobs    map[store.ID]*blobRec
	objects  map[store.ID]*entry
	assets   map[string][]*entry // most recently used first
	bySeq    map[uint64]*entry
	byStored map[*httpStored]*entry
	lru      list.List // of *entry, most recently used at the front
	nextSeq  uint64

	placing  map[store.ID]bool // blob files being renamed into place
	deleting map[store.ID]int  // blob files being unlinked

	dirty     []*entry // access times to persist
	lastFlush time.Time

	closed    bool
	dbUsers   int
	idleFiles int // idle blob handles kept (handles.go)
}

// Open opens the cache. With opt.Dir set it creates the directories,
// deletes leftovers in blobs/tmp, and loads the index from meta.db (blob
// files are checked later by Reconcile, so Open stays fast); entries over
// the budget are evicted at once.
func Open(opt Options) (*Cache, error) {
	c := newCache(opt)
	c.registerMetrics(opt.Metrics)
	if opt.Dir != "" {
		if err := c.openDisk(); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	ch := c.evictLocked()
	c.mu.Unlock()
	c.apply(ch)
	return c, nil
}

func newCache(opt Options) *Cache {
	c := &Cache{
		dir:         opt.Dir,
		log:         opt.Log,
		now:         opt.Now,
		maxBytes:    opt.MaxBytes,
		maxVariants: opt.MaxVariants,
		blobs:       map[store.ID]*blobRec{},
		objects:     map[store.ID]*entry{},
		assets:      map[string][]*entry{},
		bySeq:       map[uint64]*entry{},
		byStored:    map[*httpStored]*entry{},
		placing:     map[store.ID]bool{},
		deleting:    map[store.ID]int{},
		nextSeq:     1,
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.maxVariants <= 0 {
		c.maxVariants = DefaultMaxVariants
	}
	c.cond = sync.NewCond(&c.mu)
	c.lastFlush = c.now()
	return c
}

// Memory reports whether the cache lives in memory only (Options.Dir "").
func (c *Cache) Memory() bool { return c.dir == "" }

// StoreLimit returns the largest body that may be stored: fillMax, and in
// memory mode also at most 1/16 of the current budget (docs/edge.md §8 amnesia).
// Larger bodies are relayed, not stored.
func (c *Cache) StoreLimit(fillMax int64) int64 {
	if !c.Memory() {
		return fillMax
	}
	c.mu.Lock()
	budget := c.maxBytes / 16
	c.mu.Unlock()
	return min(fillMax, budget)
}

// Stats returns the current size of the cache.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{
		Bytes:   c.bytes,
		Entries: int64(len(c.objects) + len(c.bySeq)),
		Blobs:   int64(len(c.blobs)),
	}
}

// SetLimits changes the budget and the variants per key (≤ 0 = 16). A
// smaller budget or variant count evicts at once (least recently used
// first), before SetLimits returns.
func (c *Cache) SetLimits(maxBytes int64, maxVariants int) {
	if maxVariants <= 0 {
		maxVariants = DefaultMaxVariants
	}
	c.mu.Lock()
	c.maxBytes, c.maxVariants = maxBytes, maxVariants
	var ch changes
	for key := range c.assets {
		c.trimVariantsLocked(key, &ch)
	}
	ch.merge(c.evictLocked())
	c.mu.Unlock()
	c.apply(ch)
}

// Close stops the cache: later look-ups miss, NewFill and commits fail with
// ErrClosed, pending access times are written, and meta.db is closed as
// soon as no commit is using it (at once, or when the last one ends). Open
// Blobs and Followers stay readable until they are closed: they hold their
// own file handles or memory. Close is idempotent.
func (c *Cache) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	keys := c.takeDirtyLocked(true)
	c.mu.Unlock()
	err := c.persist(keys)
	c.mu.Lock()
	c.closed = true
	closeNow := c.dbUsers == 0
	var idle changes
	for _, rec := range c.blobs {
		c.dropIdleLocked(rec, &idle)
	}
	c.mu.Unlock()
	closeFiles(idle.files)
	if closeNow && c.db != nil {
		if cerr := c.db.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// acquireDB registers a user of meta.db; false once the cache is closed (or
// in memory mode, where there is no db).
func (c *Cache) acquireDB() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.db == nil {
		return false
	}
	c.dbUsers++
	return true
}

// releaseDB ends a use of meta.db; the last user after Close closes it.
func (c *Cache) releaseDB() {
	c.mu.Lock()
	c.dbUsers--
	last := c.closed && c.dbUsers == 0
	c.mu.Unlock()
	if last {
		if err := c.db.Close(); err != nil {
			c.log.Warn().Err(err).Msg("edgecache: closing meta.db")
		}
	}
}
