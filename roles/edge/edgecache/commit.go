package edgecache

import (
	"slices"

	"github.com/ronhq/ron/roles/edge/httpcache"
	"github.com/ronhq/ron/store"
)

// CommitObject stores the fill as /o object id with contentType. The BLAKE3
// of the bytes must equal id: otherwise the fill is aborted, followers get
// ErrMismatch and nothing is stored. When the object is already stored the
// existing entry is kept (and touched). On disk the entry is durable when
// CommitObject returns nil.
func (f *Fill) CommitObject(id store.ID, contentType string) error {
	_, size, err := f.seal(&id)
	if err != nil {
		return err
	}
	e := &entry{id: id, ctype: contentType, meta: objectMeta(contentType)}
	return f.c.store(f, id, size, e)
}

// CommitAsset stores the fill as a variant of /assets key. The blob is named
// by the BLAKE3 of the bytes (identical bodies are stored once); st.BodyLen
// is set to the length and st then belongs to the cache (read-only). A
// variant of key with equal Selecting is replaced; beyond the variant limit
// the least recently used variant is dropped.
func (f *Fill) CommitAsset(key string, st *httpcache.Stored) error {
	id, size, err := f.seal(nil)
	if err != nil {
		return err
	}
	st.BodyLen = size
	e := &entry{key: key, id: id, st: st, meta: assetMeta(key, st)}
	return f.c.store(f, id, size, e)
}

// store makes a sealed fill's bytes blob id and adds e.
func (c *Cache) store(f *Fill, id store.ID, size int64, e *entry) error {
	if c.Memory() {
		return c.storeMem(f, id, size, e)
	}
	return c.storeDisk(f, id, size, e)
}

func (c *Cache) storeMem(f *Fill, id store.ID, size int64, e *entry) error {
	f.mu.Lock()
	data := f.mem
	f.mu.Unlock()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	ch := c.commitLocked(id, size, data, e)
	c.mu.Unlock()
	c.apply(ch)
	return nil
}

// commitLocked adds blob id (unless present) and entry e to the index and
// evicts what no longer fits. An object that is already stored is touched
// instead of added.
func (c *Cache) commitLocked(id store.ID, size int64, data *chunkedData, e *entry) changes {
	var ch changes
	if c.blobs[id] == nil {
		c.addBlobLocked(id, size, data)
	}
	now := c.now()
	e.atime, e.saved = now, now
	if e.isObject() {
		if old := c.objects[id]; old != nil {
			c.touchLocked(old)
			ch.merge(c.evictLocked())
			return ch
		}
		c.addEntryLocked(e)
	} else {
		e.seq = c.nextSeq
		c.nextSeq++
		c.addEntryLocked(e) // before replacing: the old variant may share the blob
		for _, v := range slices.Clone(c.assets[e.key]) {
			if v != e && sameSelecting(v.st.Selecting, e.st.Selecting) {
				c.removeEntryLocked(v, false, &ch)
			}
		}
		c.trimVariantsLocked(e.key, &ch)
	}
	ch.keys = append(ch.keys, e.dbKey())
	ch.merge(c.evictLocked())
	return ch
}
