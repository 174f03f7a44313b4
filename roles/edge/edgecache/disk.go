package edgecache

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/durable"
)

func (c *Cache) blobsDir() string { return filepath.Join(c.dir, "blobs") }
func (c *Cache) tmpDir() string   { return filepath.Join(c.dir, "blobs", "tmp") }

// blobPath is blobs/<2 hex>/<64 hex>.
func (c *Cache) blobPath(id store.ID) string {
	h := id.Hex()
	return filepath.Join(c.dir, "blobs", h[:2], h)
}

// openDisk creates the layout, clears blobs/tmp and loads meta.db.
func (c *Cache) openDisk() error {
	for _, d := range []string{c.dir, c.blobsDir(), c.tmpDir()} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return err
		}
	}
	if err := clearDir(c.tmpDir()); err != nil {
		return err
	}
	if err := durable.SyncDir(c.dir); err != nil {
		return err
	}
	if err := durable.SyncDir(c.blobsDir()); err != nil {
		return err
	}
	return c.openMeta()
}

// clearDir deletes everything in dir (fill leftovers of a previous run).
func clearDir(dir string) error {
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, de := range des {
		if err := os.RemoveAll(filepath.Join(dir, de.Name())); err != nil {
			return err
		}
	}
	return durable.SyncDir(dir)
}

// storeDisk fsyncs the temp file, renames it to blobs/<2>/<64> (unless the
// blob is already there), fsyncs the directory, adds the entry and commits
// it to meta.db, in that order.
func (c *Cache) storeDisk(f *Fill, id store.ID, size int64, e *entry) error {
	if err := f.file.Sync(); err != nil {
		f.dropTemp()
		return err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		f.dropTemp()
		return ErrClosed
	}
	c.dbUsers++
	defer c.releaseDB()
	for c.deleting[id] > 0 || c.placing[id] {
		c.cond.Wait()
	}
	if c.blobs[id] == nil {
		c.placing[id] = true
		c.mu.Unlock()
		err := c.placeFile(f.tmp, id)
		c.mu.Lock()
		delete(c.placing, id)
		c.cond.Broadcast()
		if err != nil {
			c.mu.Unlock()
			f.dropTemp()
			return err
		}
		f.tmp = ""
	}
	ch := c.commitLocked(id, size, nil, e)
	c.mu.Unlock()
	f.finishTemp(c.blobPath(id))
	return c.persistCommit(e, ch)
}

// persistCommit writes the new entry (and evictions) to meta.db; when that
// fails the entry is taken out again, so what is visible is what is durable.
func (c *Cache) persistCommit(e *entry, ch changes) error {
	err := c.persistTx(ch.keys)
	if err != nil {
		c.mu.Lock()
		c.removeEntryLocked(e, false, &ch)
		c.mu.Unlock()
		ch.keys = ch.keys[:0]
	}
	closeFiles(ch.files)
	for _, id := range ch.unlink {
		c.unlinkBlob(id)
	}
	return err
}

// placeFile renames tmp into blobs/<2 hex>/<64 hex> and fsyncs the shard
// directory (and blobs/ when the shard was created).
func (c *Cache) placeFile(tmp string, id store.ID) error {
	shard := filepath.Dir(c.blobPath(id))
	switch err := os.Mkdir(shard, 0o750); {
	case err == nil:
		if err := durable.SyncDir(c.blobsDir()); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrExist):
		return err
	}
	if err := os.Rename(tmp, c.blobPath(id)); err != nil {
		return err
	}
	return durable.SyncDir(shard)
}

// unlinkBlob removes a blob file queued by releaseBlobLocked.
func (c *Cache) unlinkBlob(id store.ID) {
	if err := os.Remove(c.blobPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.log.Warn().Err(err).Str("blob", id.Prefix()).Msg("edgecache: removing blob")
	}
	c.mu.Lock()
	if c.deleting[id]--; c.deleting[id] <= 0 {
		delete(c.deleting, id)
	}
	c.cond.Broadcast()
	c.mu.Unlock()
}

// blobMissing handles a blob file that could not be opened: when it is
// simply gone although the index still has it, the entries using it are
// dropped (Reconcile would find the same).
func (c *Cache) blobMissing(id store.ID, rec *blobRec, err error) {
	if !errors.Is(err, fs.ErrNotExist) {
		c.log.Warn().Err(err).Str("blob", id.Prefix()).Msg("edgecache: opening blob")
		return
	}
	c.mu.Lock()
	var ch changes
	if c.blobs[id] == rec && !c.placing[id] && c.deleting[id] == 0 {
		c.dropBlobsLocked(map[store.ID]bool{id: true}, &ch)
	}
	c.mu.Unlock()
	c.apply(ch)
}

// dropBlobsLocked removes every entry whose blob is in ids.
func (c *Cache) dropBlobsLocked(ids map[store.ID]bool, ch *changes) {
	for e := c.lru.Front(); e != nil; {
		next := e.Next()
		if en := e.Value.(*entry); ids[en.id] {
			c.removeEntryLocked(en, false, ch)
		}
		e = next
	}
}
