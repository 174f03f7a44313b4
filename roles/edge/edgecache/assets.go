package edgecache

import (
	"os"
	"slices"

	"github.com/ronhq/ron/roles/edge/httpcache"
	"github.com/ronhq/ron/store"
)

// Asset is one stored variant of an /assets key. Stored is shared and
// read-only: replace it through UpdateAsset, never modify it.
type Asset struct {
	Stored *httpcache.Stored
	Blob   store.ID
}

// Variants returns the stored variants of key, most recently used first (a
// copy; it does not touch the LRU). Nil after Close.
func (c *Cache) Variants(key string) []Asset {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	vs := c.assets[key]
	out := make([]Asset, len(vs))
	for i, e := range vs {
		out[i] = Asset{Stored: e.st, Blob: e.id}
	}
	return out
}

// OpenAsset opens the body of a, touching its entry. It is false when the
// blob is gone (evicted meanwhile) or the cache is closed; a replaced
// variant's body is still opened while its blob exists.
func (c *Cache) OpenAsset(a Asset) (Blob, bool) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, false
	}
	if e := c.byStored[a.Stored]; e != nil {
		c.touchLocked(e)
	}
	rec := c.blobs[a.Blob]
	var idle *os.File
	if rec != nil {
		idle = c.takeIdleLocked(rec)
	}
	due := c.takeDirtyLocked(false)
	c.mu.Unlock()
	c.flushTouches(due)
	return c.openBlob(a.Blob, rec, idle)
}

// UpdateAsset replaces the headers and times of the variant of key whose
// Stored is old (pointer identity) by updated, which the cache then owns;
// its BodyLen is kept from old. False when no such variant exists any more.
func (c *Cache) UpdateAsset(key string, old, updated *httpcache.Stored) bool {
	c.mu.Lock()
	e := c.byStored[old]
	if e == nil || e.key != key || c.closed {
		c.mu.Unlock()
		return false
	}
	updated.BodyLen = old.BodyLen
	c.replaceStoredLocked(e, updated)
	c.touchLocked(e)
	ch := changes{keys: []dbKey{e.dbKey()}}
	ch.merge(c.evictLocked())
	c.mu.Unlock()
	c.apply(ch)
	return true
}

// replaceStoredLocked swaps e's stored response, keeping the byte count.
func (c *Cache) replaceStoredLocked(e *entry, st *httpcache.Stored) {
	delete(c.byStored, e.st)
	e.st = st
	c.byStored[st] = e
	c.bytes -= e.meta
	e.meta = assetMeta(e.key, st)
	c.bytes += e.meta
}

// Invalidate marks every variant of key Invalidated (never fresh, never
// served stale) by replacing each Stored with a marked copy.
func (c *Cache) Invalidate(key string) {
	c.mu.Lock()
	var ch changes
	for _, e := range c.assets[key] {
		if e.st.Invalidated {
			continue
		}
		st := e.st.Clone()
		st.Invalidated = true
		c.replaceStoredLocked(e, st)
		ch.keys = append(ch.keys, e.dbKey())
	}
	c.mu.Unlock()
	c.apply(ch)
}

// RemoveVariant removes the variant of key whose Stored is st, if present.
func (c *Cache) RemoveVariant(key string, st *httpcache.Stored) {
	c.mu.Lock()
	var ch changes
	if e := c.byStored[st]; e != nil && e.key == key {
		c.removeEntryLocked(e, false, &ch)
	}
	c.mu.Unlock()
	c.apply(ch)
}

// sameSelecting reports whether two variants were selected by the same
// request header values.
func sameSelecting(a, b []httpcache.Selected) bool {
	return slices.EqualFunc(a, b, func(x, y httpcache.Selected) bool {
		return x.Name == y.Name && x.Value == y.Value && x.Present == y.Present
	})
}
