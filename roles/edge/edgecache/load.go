package edgecache

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/ronhq/ron/store"
)

// loaded is one entry read from meta.db with its blob size.
type loaded struct {
	e    *entry
	size int64
}

// load reads meta.db into the index, most recently used last, and deletes
// records that cannot be decoded.
func (c *Cache) load() error {
	var all []loaded
	var bad []dbKey
	err := c.db.View(func(tx *bbolt.Tx) error {
		err := tx.Bucket(bucketObjects).ForEach(func(k, v []byte) error {
			if l, ok := decodeObject(k, v); ok {
				all = append(all, l)
			} else {
				bad = append(bad, badKey(true, k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketAssets).ForEach(func(k, v []byte) error {
			if l, ok := decodeAsset(k, v); ok {
				all = append(all, l)
			} else {
				bad = append(bad, badKey(false, k))
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	slices.SortStableFunc(all, func(a, b loaded) int { return a.e.atime.Compare(b.e.atime) })
	c.mu.Lock()
	var ch changes
	for _, l := range all {
		c.loadEntryLocked(l, &ch)
	}
	c.mu.Unlock()
	if len(bad) > 0 {
		c.log.Warn().Int("records", len(bad)).Msg("edgecache: dropping undecodable meta.db records")
	}
	err = c.deleteKeys(append(ch.keys, bad...))
	for _, id := range ch.unlink {
		c.unlinkBlob(id)
	}
	return err
}

// loadEntryLocked adds one loaded entry.
func (c *Cache) loadEntryLocked(l loaded, ch *changes) {
	e := l.e
	if b := c.blobs[e.id]; b == nil {
		c.addBlobLocked(e.id, l.size, nil)
	}
	e.saved = e.atime
	c.addEntryLocked(e)
	if !e.isObject() {
		c.nextSeq = max(c.nextSeq, e.seq+1)
		c.trimVariantsLocked(e.key, ch)
	}
}

// deleteKeys removes records unconditionally (used while loading; there is
// nothing to unlink yet: blobs are reconciled later).
func (c *Cache) deleteKeys(keys []dbKey) error {
	if len(keys) == 0 {
		return nil
	}
	return c.db.Update(func(tx *bbolt.Tx) error {
		for _, k := range keys {
			if err := tx.Bucket(k.bucket()).Delete(k.bytes()); err != nil {
				return err
			}
		}
		return nil
	})
}

func badKey(object bool, k []byte) dbKey {
	return dbKey{object: object, raw: slices.Clone(k)}
}

func decodeObject(k, v []byte) (loaded, bool) {
	var r objectRecord
	if len(k) != len(store.ID{}) || json.Unmarshal(v, &r) != nil || r.Size < 0 {
		return loaded{}, false
	}
	e := &entry{ctype: r.ContentType, meta: objectMeta(r.ContentType), atime: r.Access}
	copy(e.id[:], k)
	return loaded{e: e, size: r.Size}, true
}

func decodeAsset(k, v []byte) (loaded, bool) {
	var r assetRecord
	if len(k) != 8 || json.Unmarshal(v, &r) != nil || r.Key == "" || r.Stored.BodyLen < 0 {
		return loaded{}, false
	}
	raw, err := hex.DecodeString(r.Blob)
	if err != nil || len(raw) != len(store.ID{}) {
		return loaded{}, false
	}
	st := decodeStored(r.Stored)
	e := &entry{key: r.Key, seq: binary.BigEndian.Uint64(k), st: st, meta: assetMeta(r.Key, st), atime: r.Access}
	copy(e.id[:], raw)
	return loaded{e: e, size: st.BodyLen}, true
}
