package edgecache

import (
	"os"

	"github.com/ronhq/ron/store"
)

// Object returns the stored object id with the Content-Type recorded at fill
// time. A hit moves the object to the front of the LRU. ok is false on a
// miss, after Close, or when the blob turned out to be missing (the entry is
// then dropped). The caller must Close b.
func (c *Cache) Object(id store.ID) (b Blob, contentType string, ok bool) {
	c.mu.Lock()
	e := c.objects[id]
	if e == nil || c.closed {
		c.mu.Unlock()
		return nil, "", false
	}
	c.touchLocked(e)
	ctype, rec := e.ctype, c.blobs[id]
	var idle *os.File
	if rec != nil {
		idle = c.takeIdleLocked(rec)
	}
	due := c.takeDirtyLocked(false)
	c.mu.Unlock()
	c.flushTouches(due)
	b, ok = c.openBlob(id, rec, idle)
	return b, ctype, ok
}

// openBlob opens blob id whose record was rec when looked up, with idle,
// an idle handle of rec taken meanwhile (or nil: the file is opened).
func (c *Cache) openBlob(id store.ID, rec *blobRec, idle *os.File) (Blob, bool) {
	if rec == nil {
		return nil, false
	}
	if rec.mem != nil {
		return &memBlob{d: rec.mem, size: rec.size}, true
	}
	f := idle
	if f == nil {
		var err error
		if f, err = os.Open(c.blobPath(id)); err != nil {
			c.blobMissing(id, rec, err)
			return nil, false
		}
	}
	return &fileBlob{f: f, size: rec.size, c: c, id: id, rec: rec}, true
}
