package edgecache

import (
	"os"

	"github.com/ronhq/ron/store"
)

// Idle handles: on disk, a hit needs the blob's file open. Opening it per
// hit costs openat, fstat, fcntl and a failed epoll registration, so each
// blob keeps the handles its Blobs closed, up to maxIdlePerBlob (and
// maxIdleFiles in all), for the next hits to take. A handle is used by one
// Blob at a time, so its file offset serves sendfile (FileSectioner). The
// handles of a blob are closed when its record goes (eviction, removal,
// a missing file) and at Close; a blob file is immutable (named by its
// hash), so a handle always reads the bytes of its id.
const (
	maxIdlePerBlob = 16
	maxIdleFiles   = 256
)

// takeIdleLocked pops an idle handle of rec, or returns nil.
func (c *Cache) takeIdleLocked(rec *blobRec) *os.File {
	n := len(rec.idle)
	if n == 0 {
		return nil
	}
	f := rec.idle[n-1]
	rec.idle[n-1] = nil
	rec.idle = rec.idle[:n-1]
	c.idleFiles--
	return f
}

// putIdle keeps f as an idle handle of blob id when rec is still its
// record, the cache is open and the bounds allow; false means the caller
// closes f.
func (c *Cache) putIdle(id store.ID, rec *blobRec, f *os.File) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.blobs[id] != rec || len(rec.idle) >= maxIdlePerBlob || c.idleFiles >= maxIdleFiles {
		return false
	}
	rec.idle = append(rec.idle, f)
	c.idleFiles++
	return true
}

// dropIdleLocked moves rec's idle handles into ch, to be closed outside the
// lock.
func (c *Cache) dropIdleLocked(rec *blobRec, ch *changes) {
	ch.files = append(ch.files, rec.idle...)
	c.idleFiles -= len(rec.idle)
	rec.idle = nil
}

// closeFiles closes handles taken out of the index.
func closeFiles(fs []*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}
