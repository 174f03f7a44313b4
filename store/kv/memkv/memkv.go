// Package memkv is the in-memory kv engine (amnesia mode and tests). It
// implements every kv contract exactly like store/kv/bolt except durability:
// nothing survives the process.
//
// Design: the committed state is an immutable version (bucket name → sorted
// slice of entries) behind an atomic pointer. View loads the pointer, so it
// is lock-free and sees a consistent snapshot for as long as it runs. Update
// (one at a time) copies a bucket's slice on its first write in the
// transaction, mutates the copy, and publishes a new version on commit;
// untouched buckets are shared between versions.
//
// Complexity, n = keys in the bucket: Get and Seek O(log n); Put and Delete
// O(n) (binary search plus an insertion memmove), plus an O(n) copy on the
// first write to each bucket in an Update; commit O(number of buckets);
// starting a View O(1). This suits metadata of up to a few hundred thousand
// keys per bucket; a bulk Update of m writes into one bucket costs O(m·n).
package memkv

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/internal/gate"
)

// entry is one key/value pair; its byte slices are never modified once
// stored.
type entry struct{ k, v []byte }

// table is one bucket's sorted contents. Committed tables are immutable.
type table struct{ entries []entry }

// version is one committed state; never modified once published.
type version map[string]*table

// DB is an in-memory kv.DB. The zero value is not usable; call New.
type DB struct {
	gate  *gate.Gate
	state atomic.Pointer[version]
}

var _ kv.DB = (*DB)(nil)

// New returns an empty open DB.
func New() *DB {
	db := &DB{gate: gate.New()}
	db.state.Store(&version{})
	return db
}

// View implements kv.DB.
func (db *DB) View(ctx context.Context, fn func(kv.Tx) error) error {
	release, err := db.gate.Enter(ctx, false)
	if err != nil {
		return err
	}
	defer release()
	t := newTx(*db.state.Load(), false)
	defer t.close()
	return fn(t)
}

// Update implements kv.DB.
func (db *DB) Update(ctx context.Context, fn func(kv.Tx) error) error {
	release, err := db.gate.Enter(ctx, true)
	if err != nil {
		return err
	}
	defer release()
	t := newTx(*db.state.Load(), true)
	defer t.close() // also on panic: the writes are simply dropped
	if err := fn(t); err != nil {
		return err
	}
	db.state.Store(t.commit())
	return nil
}

// Close implements kv.DB; the data is dropped.
func (db *DB) Close() error {
	if db.gate.Close() {
		db.state.Store(&version{})
	}
	return nil
}

// tx is a kv.Tx over a base version.
type tx struct {
	base     version
	writable bool
	closed   bool
	handles  map[string]*bucket // live handle per name
	deleted  map[string]bool    // names deleted in this tx (maybe recreated)
}

func newTx(base version, writable bool) *tx {
	return &tx{base: base, writable: writable, handles: map[string]*bucket{}}
}

func (t *tx) close() { t.closed = true }

// Bucket implements kv.Tx.
func (t *tx) Bucket(name string) kv.Bucket {
	if b := t.bucket(name); b != nil {
		return b
	}
	return nil // a typed nil *bucket would not compare equal to nil
}

func (t *tx) bucket(name string) *bucket {
	if t.closed {
		return nil
	}
	if b, ok := t.handles[name]; ok {
		return b
	}
	if t.deleted[name] {
		return nil
	}
	tb, ok := t.base[name]
	if !ok {
		return nil
	}
	b := &bucket{tx: t, t: tb}
	t.handles[name] = b
	return b
}

// CreateBucket implements kv.Tx.
func (t *tx) CreateBucket(name string) (kv.Bucket, error) {
	if err := t.writeCheck(); err != nil {
		return nil, err
	}
	if err := kv.CheckBucketName(name); err != nil {
		return nil, err
	}
	if b := t.bucket(name); b != nil {
		return b, nil
	}
	b := &bucket{tx: t, t: &table{}, owned: true}
	t.handles[name] = b
	return b, nil
}

// DeleteBucket implements kv.Tx.
func (t *tx) DeleteBucket(name string) error {
	if err := t.writeCheck(); err != nil {
		return err
	}
	b := t.bucket(name)
	if b == nil {
		return kv.ErrBucketNotFound
	}
	b.gone = true
	delete(t.handles, name)
	if t.deleted == nil {
		t.deleted = map[string]bool{}
	}
	t.deleted[name] = true
	return nil
}

func (t *tx) writeCheck() error {
	if t.closed {
		return kv.ErrTxClosed
	}
	if !t.writable {
		return kv.ErrReadOnly
	}
	return nil
}

// commit builds the next version: the base minus deleted buckets, plus every
// bucket written or created in this transaction.
func (t *tx) commit() *version {
	next := maps.Clone(t.base)
	for name := range t.deleted {
		delete(next, name)
	}
	for name, b := range t.handles {
		if b.owned {
			next[name] = b.t
		}
	}
	return &next
}

// bucket is a kv.Bucket handle. Once owned, t is this transaction's private
// copy and is mutated in place.
type bucket struct {
	tx    *tx
	t     *table
	owned bool
	gone  bool
	mod   uint64 // bumped by every write, so cursors can reposition
}

// readable reports whether reads may proceed.
func (b *bucket) readable() bool { return !b.tx.closed && !b.gone }

// search returns the index of the first key >= key and whether it equals key.
func (b *bucket) search(key []byte) (int, bool) {
	return slices.BinarySearchFunc(b.t.entries, key, func(e entry, k []byte) int {
		return bytes.Compare(e.k, k)
	})
}

// Get implements kv.Bucket.
func (b *bucket) Get(key []byte) []byte {
	if !b.readable() {
		return nil
	}
	if i, ok := b.search(key); ok {
		return b.t.entries[i].v
	}
	return nil
}

// Put implements kv.Bucket.
func (b *bucket) Put(key, value []byte) error {
	if err := b.writeCheck(); err != nil {
		return err
	}
	if err := kv.CheckPut(key, value); err != nil {
		return err
	}
	b.own()
	buf := make([]byte, len(key)+len(value))
	copy(buf, key)
	copy(buf[len(key):], value)
	e := entry{k: buf[:len(key):len(key)], v: buf[len(key):]}
	i, ok := b.search(key)
	if ok {
		b.t.entries[i] = e
	} else {
		b.t.entries = slices.Insert(b.t.entries, i, e)
	}
	b.mod++
	return nil
}

// Delete implements kv.Bucket.
func (b *bucket) Delete(key []byte) error {
	if err := b.writeCheck(); err != nil {
		return err
	}
	i, ok := b.search(key)
	if !ok {
		return nil
	}
	b.own()
	b.t.entries = slices.Delete(b.t.entries, i, i+1)
	b.mod++
	return nil
}

func (b *bucket) writeCheck() error {
	if err := b.tx.writeCheck(); err != nil {
		return err
	}
	if b.gone {
		return kv.ErrBucketNotFound
	}
	return nil
}

// own makes t a private copy on the first write in this transaction.
func (b *bucket) own() {
	if !b.owned {
		b.t = &table{entries: slices.Clone(b.t.entries)}
		b.owned = true
	}
}

// Cursor implements kv.Bucket.
func (b *bucket) Cursor() kv.Cursor { return &cursor{b: b} }
