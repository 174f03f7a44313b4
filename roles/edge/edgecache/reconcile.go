package edgecache

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ronhq/ron/store"
)

// Reconcile brings the index and blobs/ into agreement after a restart:
// blob files no entry uses are removed, and entries whose blob file is
// missing or has the wrong size are dropped. It runs in the background
// (the role runs it as a task) while the cache serves; it stops early with
// ctx's error, or ErrClosed after Close. A no-op in memory mode.
func (c *Cache) Reconcile(ctx context.Context) error {
	if c.Memory() {
		return nil
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	des, err := os.ReadDir(c.blobsDir())
	if err != nil {
		return err
	}
	seen := map[store.ID]int64{}
	for _, de := range des {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !de.IsDir() || !isShard(de.Name()) {
			continue
		}
		if err := c.reconcileShard(ctx, de.Name(), seen); err != nil {
			return err
		}
	}
	return c.dropMissing(ctx, seen)
}

// isShard reports whether name is a two-digit lowercase hex directory.
func isShard(name string) bool {
	return len(name) == 2 && isHex(name)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if ch := s[i]; (ch < '0' || ch > '9') && (ch < 'a' || ch > 'f') {
			return false
		}
	}
	return true
}

// reconcileShard removes the orphans of one shard and records the sizes of
// the blob files the index knows.
func (c *Cache) reconcileShard(ctx context.Context, shard string, seen map[store.ID]int64) error {
	dir := filepath.Join(c.blobsDir(), shard)
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, de := range des {
		if err := ctx.Err(); err != nil {
			return err
		}
		id, ok := blobName(shard, de.Name())
		if !ok {
			c.removeStray(filepath.Join(dir, de.Name()))
			continue
		}
		if c.removeOrphan(id) {
			continue
		}
		if info, err := de.Info(); err == nil {
			seen[id] = info.Size()
		}
	}
	return nil
}

// blobName parses a blob file name within shard.
func blobName(shard, name string) (store.ID, bool) {
	if len(name) != 64 || name[:2] != shard || !isHex(name) {
		return store.ID{}, false
	}
	id, err := store.ParseID("b3:" + name)
	return id, err == nil
}

func (c *Cache) removeStray(path string) {
	if err := os.RemoveAll(path); err != nil {
		c.log.Warn().Err(err).Str("path", path).Msg("edgecache: removing stray file")
	}
}

// removeOrphan unlinks blob id when the index does not know it; true if so.
func (c *Cache) removeOrphan(id store.ID) bool {
	c.mu.Lock()
	known := c.blobs[id] != nil || c.placing[id] || c.deleting[id] > 0
	if !known {
		c.deleting[id]++
	}
	c.mu.Unlock()
	if !known {
		c.unlinkBlob(id)
	}
	return !known
}

// dropMissing drops the entries whose blob file was not seen (checked again
// with a stat, since a blob may have been placed after its shard was read)
// or has another size than recorded.
func (c *Cache) dropMissing(ctx context.Context, seen map[store.ID]int64) error {
	c.mu.Lock()
	var suspects []store.ID
	for id, b := range c.blobs {
		if size, ok := seen[id]; !ok || size != b.size {
			suspects = append(suspects, id)
		}
	}
	c.mu.Unlock()
	bad := map[store.ID]bool{}
	for _, id := range suspects {
		if err := ctx.Err(); err != nil {
			return err
		}
		if c.blobBroken(id) {
			bad[id] = true
		}
	}
	if len(bad) == 0 {
		return nil
	}
	c.mu.Lock()
	var ch changes
	for id := range bad {
		if c.placing[id] || c.deleting[id] > 0 {
			delete(bad, id)
		}
	}
	c.dropBlobsLocked(bad, &ch)
	c.mu.Unlock()
	c.log.Info().Int("blobs", len(bad)).Msg("edgecache: dropped entries whose blob is missing or damaged")
	c.apply(ch)
	return nil
}

// blobBroken reports whether blob id's file is missing or its size differs
// from the index.
func (c *Cache) blobBroken(id store.ID) bool {
	info, err := os.Stat(c.blobPath(id))
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.blobs[id]
	switch {
	case b == nil:
		return false
	case errors.Is(err, fs.ErrNotExist):
		return true
	case err != nil:
		return false
	}
	return info.Size() != b.size
}
