package edgecache

import (
	"encoding/binary"
	"encoding/json"
	"path/filepath"
	"time"

	"go.etcd.io/bbolt"

	"github.com/ronhq/ron/store"
)

var (
	bucketObjects = []byte("objects") // id (32 bytes) → objectRecord
	bucketAssets  = []byte("assets")  // seq (8 bytes, big-endian) → assetRecord
)

// metaOpenTimeout bounds the wait for meta.db's file lock.
const metaOpenTimeout = 2 * time.Second

// dbKey names one meta.db record.
type dbKey struct {
	object bool
	id     store.ID
	seq    uint64
	raw    []byte // the stored key of an undecodable record
}

func (k dbKey) bucket() []byte {
	if k.object {
		return bucketObjects
	}
	return bucketAssets
}

func (k dbKey) bytes() []byte {
	if k.raw != nil {
		return k.raw
	}
	if k.object {
		return k.id[:]
	}
	return binary.BigEndian.AppendUint64(nil, k.seq)
}

// openMeta opens meta.db and loads the index.
func (c *Cache) openMeta() error {
	db, err := bbolt.Open(filepath.Join(c.dir, "meta.db"), 0o600, &bbolt.Options{Timeout: metaOpenTimeout})
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, b := range [][]byte{bucketObjects, bucketAssets} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		c.db = db
		err = c.load()
	}
	if err != nil {
		db.Close()
		c.db = nil
	}
	return err
}

// persist writes the current state of the named entries (or deletes the
// records of entries that are gone). A no-op in memory mode.
func (c *Cache) persist(keys []dbKey) error {
	if len(keys) == 0 || c.db == nil {
		return nil
	}
	if !c.acquireDB() {
		return ErrClosed
	}
	defer c.releaseDB()
	return c.persistTx(keys)
}

// persistTx is persist for a caller that holds a db use. Each record is
// taken from the index inside the transaction, so concurrent writers of the
// same entry always leave its latest state in meta.db.
func (c *Cache) persistTx(keys []dbKey) error {
	if len(keys) == 0 || c.db == nil {
		return nil
	}
	return c.db.Update(func(tx *bbolt.Tx) error {
		for _, k := range keys {
			val, ok, err := c.record(k)
			if err != nil {
				return err
			}
			b := tx.Bucket(k.bucket())
			if !ok {
				err = b.Delete(k.bytes())
			} else {
				err = b.Put(k.bytes(), val)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// record encodes the entry k names; ok is false when it is not in the index.
func (c *Cache) record(k dbKey) (val []byte, ok bool, err error) {
	c.mu.Lock()
	var e *entry
	if k.object {
		e = c.objects[k.id]
	} else {
		e = c.bySeq[k.seq]
	}
	if e == nil {
		c.mu.Unlock()
		return nil, false, nil
	}
	e.saved = e.atime
	var rec any
	if e.isObject() {
		rec = objectRecord{Size: c.blobs[e.id].size, ContentType: e.ctype, Access: e.atime}
	} else {
		rec = assetRecord{Key: e.key, Blob: e.id.Hex(), Access: e.atime, Stored: encodeStored(e.st)}
	}
	c.mu.Unlock()
	val, err = json.Marshal(rec)
	return val, err == nil, err
}
