package edgecache

import (
	"container/list"
	"os"
	"slices"
	"time"

	"github.com/ronhq/ron/roles/edge/httpcache"
	"github.com/ronhq/ron/store"
)

type httpStored = httpcache.Stored

// entry is one /o object (key == "") or one /assets variant.
type entry struct {
	key   string   // /assets key; "" for an object
	id    store.ID // object id, or the blob of an asset
	seq   uint64   // assets: meta.db key
	ctype string   // objects
	st    *httpStored
	meta  int64 // header bytes counted in the budget
	elem  *list.Element
	atime time.Time // last access
	saved time.Time // access time last written to meta.db
	dirty bool      // queued in Cache.dirty
	gone  bool      // removed from the index
}

func (e *entry) isObject() bool { return e.key == "" }

// dbKey names the meta.db record of e.
func (e *entry) dbKey() dbKey {
	if e.isObject() {
		return dbKey{object: true, id: e.id}
	}
	return dbKey{seq: e.seq}
}

// blobRec is one stored body.
type blobRec struct {
	size int64
	refs int          // entries using it
	mem  *chunkedData // memory mode
	idle []*os.File   // disk mode: handles for the next hits (handles.go)
}

// changes collects what must happen outside the lock after the index
// changed: meta.db records to rewrite (or delete), blob files to unlink
// and idle handles to close.
type changes struct {
	keys   []dbKey
	unlink []store.ID
	files  []*os.File
}

func (ch *changes) merge(o changes) {
	ch.keys = append(ch.keys, o.keys...)
	ch.unlink = append(ch.unlink, o.unlink...)
	ch.files = append(ch.files, o.files...)
}

// objectMeta and assetMeta are the header bytes an entry adds to the budget.
func objectMeta(ctype string) int64 { return int64(len(ctype)) }

func assetMeta(key string, st *httpStored) int64 {
	n := len(key)
	for k, vs := range st.Header {
		for _, v := range vs {
			n += len(k) + len(v)
		}
	}
	for _, s := range st.Selecting {
		n += len(s.Name) + len(s.Value)
		for _, r := range s.Raw {
			n += len(r)
		}
	}
	return int64(n)
}

// addEntryLocked links e into the index and takes a reference on its blob,
// which must be in c.blobs.
func (c *Cache) addEntryLocked(e *entry) {
	b := c.blobs[e.id]
	b.refs++
	c.bytes += e.meta
	e.elem = c.lru.PushFront(e)
	if e.isObject() {
		c.objects[e.id] = e
	} else {
		c.assets[e.key] = slices.Insert(c.assets[e.key], 0, e)
		c.bySeq[e.seq] = e
		c.byStored[e.st] = e
	}
}

// addBlobLocked records a blob of size bytes (no references yet).
func (c *Cache) addBlobLocked(id store.ID, size int64, mem *chunkedData) *blobRec {
	b := &blobRec{size: size, mem: mem}
	c.blobs[id] = b
	c.bytes += size
	return b
}

// removeEntryLocked unlinks e; evicted counts it as an eviction. A blob no
// entry uses any more is dropped (on disk: queued for unlinking).
func (c *Cache) removeEntryLocked(e *entry, evicted bool, ch *changes) {
	if e.gone {
		return
	}
	e.gone = true
	c.lru.Remove(e.elem)
	c.bytes -= e.meta
	if e.isObject() {
		delete(c.objects, e.id)
	} else {
		vs := slices.DeleteFunc(c.assets[e.key], func(v *entry) bool { return v == e })
		if len(vs) == 0 {
			delete(c.assets, e.key)
		} else {
			c.assets[e.key] = vs
		}
		delete(c.bySeq, e.seq)
		delete(c.byStored, e.st)
	}
	ch.keys = append(ch.keys, e.dbKey())
	if evicted && c.evictions != nil {
		c.evictions.Inc()
	}
	c.releaseBlobLocked(e.id, ch)
}

// releaseBlobLocked drops one reference to blob id.
func (c *Cache) releaseBlobLocked(id store.ID, ch *changes) {
	b := c.blobs[id]
	if b == nil {
		return
	}
	if b.refs--; b.refs > 0 {
		return
	}
	delete(c.blobs, id)
	c.dropIdleLocked(b, ch)
	c.bytes -= b.size
	if !c.Memory() {
		c.deleting[id]++
		ch.unlink = append(ch.unlink, id)
	}
}

// evictLocked removes least recently used entries until the budget holds.
func (c *Cache) evictLocked() changes {
	var ch changes
	for c.bytes > c.maxBytes && c.lru.Len() > 0 {
		c.removeEntryLocked(c.lru.Back().Value.(*entry), true, &ch)
	}
	return ch
}

// trimVariantsLocked drops the least recently used variants of key beyond
// the variant limit.
func (c *Cache) trimVariantsLocked(key string, ch *changes) {
	for vs := c.assets[key]; len(vs) > c.maxVariants; vs = c.assets[key] {
		c.removeEntryLocked(vs[len(vs)-1], true, ch)
	}
}

// touchLocked marks e used now and queues its access time for meta.db when
// the last write is a minute old.
func (c *Cache) touchLocked(e *entry) {
	now := c.now()
	e.atime = now
	c.lru.MoveToFront(e.elem)
	if !e.isObject() {
		vs := c.assets[e.key]
		if i := slices.Index(vs, e); i > 0 {
			copy(vs[1:i+1], vs[:i])
			vs[0] = e
		}
	}
	if c.Memory() || e.dirty || now.Sub(e.saved) < accessPersistInterval {
		return
	}
	e.dirty = true
	c.dirty = append(c.dirty, e)
}

// takeDirtyLocked returns the queued access-time writes when the last flush
// is a minute old (or force), and resets the queue.
func (c *Cache) takeDirtyLocked(force bool) []dbKey {
	if len(c.dirty) == 0 || (!force && c.now().Sub(c.lastFlush) < accessPersistInterval) {
		return nil
	}
	keys := make([]dbKey, 0, len(c.dirty))
	for _, e := range c.dirty {
		e.dirty = false
		if !e.gone {
			keys = append(keys, e.dbKey())
		}
	}
	c.dirty = c.dirty[:0]
	c.lastFlush = c.now()
	return keys
}

// flushTouches writes the access times takeDirtyLocked returned.
func (c *Cache) flushTouches(keys []dbKey) {
	if err := c.persist(keys); err != nil {
		c.log.Debug().Err(err).Msg("edgecache: writing access times")
	}
}

// apply performs the I/O an index change requires: meta.db first, then the
// blob files, so a crash never leaves an entry whose blob is gone.
func (c *Cache) apply(ch changes) {
	closeFiles(ch.files)
	if err := c.persist(ch.keys); err != nil {
		c.log.Warn().Err(err).Msg("edgecache: updating meta.db")
	}
	for _, id := range ch.unlink {
		c.unlinkBlob(id)
	}
}
