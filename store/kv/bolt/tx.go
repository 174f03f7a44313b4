package bolt

import (
	bbolt "go.etcd.io/bbolt"

	"github.com/ronhq/ron/store/kv"
)

// tx wraps a bbolt transaction; closed is set when fn returns.
type tx struct {
	btx     *bbolt.Tx
	closed  bool
	handles map[string]*bucket
}

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
	bb := t.btx.Bucket([]byte(name))
	if bb == nil {
		return nil
	}
	return t.handle(name, bb)
}

func (t *tx) handle(name string, bb *bbolt.Bucket) *bucket {
	b := &bucket{tx: t, bb: bb}
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
	bb, err := t.btx.CreateBucket([]byte(name))
	if err != nil {
		return nil, err
	}
	return t.handle(name, bb), nil
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
	if err := t.btx.DeleteBucket([]byte(name)); err != nil {
		return err
	}
	b.gone = true
	delete(t.handles, name)
	return nil
}

func (t *tx) writeCheck() error {
	if t.closed {
		return kv.ErrTxClosed
	}
	if !t.btx.Writable() {
		return kv.ErrReadOnly
	}
	return nil
}

// bucket wraps a bbolt bucket; mod counts writes so cursors can reposition.
type bucket struct {
	tx   *tx
	bb   *bbolt.Bucket
	gone bool
	mod  uint64
}

func (b *bucket) readable() bool { return !b.tx.closed && !b.gone }

// Get implements kv.Bucket.
func (b *bucket) Get(key []byte) []byte {
	if !b.readable() {
		return nil
	}
	return b.bb.Get(key)
}

// Put implements kv.Bucket. bbolt keeps the slices it is given until commit,
// so key and value are copied into one fresh buffer.
func (b *bucket) Put(key, value []byte) error {
	if err := b.writeCheck(); err != nil {
		return err
	}
	if err := kv.CheckPut(key, value); err != nil {
		return err
	}
	buf := make([]byte, len(key)+len(value))
	copy(buf, key)
	copy(buf[len(key):], value)
	if err := b.bb.Put(buf[:len(key):len(key)], buf[len(key):]); err != nil {
		return err
	}
	b.mod++
	return nil
}

// Delete implements kv.Bucket.
func (b *bucket) Delete(key []byte) error {
	if err := b.writeCheck(); err != nil {
		return err
	}
	if err := b.bb.Delete(key); err != nil {
		return err
	}
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

// Cursor implements kv.Bucket.
func (b *bucket) Cursor() kv.Cursor { return &cursor{b: b} }
