// Package kv is the transactional, ordered key-value interface used for
// metadata (the index role's names, providers and expiry index; possibly the
// registry). Two engines implement it: store/kv/bolt (bbolt on disk, durable)
// and store/kv/memkv (memory, for amnesia mode and tests). Both pass the
// conformance suite in store/kvtest, so callers can rely on every contract
// stated here without knowing the engine.
//
// Model: a DB holds named top-level buckets (no nesting); a bucket maps byte
// keys to byte values, ordered by bytes.Compare. All access happens inside a
// transaction:
//
//   - View runs a read-only transaction over a consistent snapshot: it sees
//     every Update committed before it started and nothing committed later.
//   - Update runs the single read-write transaction. Updates are serialized;
//     one Update is atomic (all its writes become visible together or not at
//     all) and, on a durable engine, fsynced before Update returns nil.
//
// Memory rules: slices returned by Get and by cursors are valid only until
// the transaction ends and must not be modified; copy what you keep. Put
// copies its key and value, so callers may reuse their buffers at once.
//
// A Tx, and the Buckets and Cursors obtained from it, belong to the goroutine
// running fn and must not be used concurrently or after fn returns (writes
// then fail with ErrTxClosed, reads return nil). Transactions must not be
// nested: do not call View or Update from inside fn, and a View must not wait
// for an Update to finish (bbolt may have to wait for open readers to grow
// its memory map).
package kv

import (
	"context"
	"errors"
)

// Size limits, the same for every engine (they are bbolt's).
const (
	// MaxKeySize is the largest key (and bucket name) in bytes.
	MaxKeySize = 32768
	// MaxValueSize is the largest value in bytes.
	MaxValueSize = (1 << 31) - 2
)

var (
	// ErrClosed: the DB was closed; View and Update return it.
	ErrClosed = errors.New("kv: database closed")
	// ErrTxClosed: a Tx, Bucket or Cursor was written after its transaction
	// ended.
	ErrTxClosed = errors.New("kv: transaction closed")
	// ErrReadOnly: a write (Put, Delete, CreateBucket, DeleteBucket) was
	// attempted inside View.
	ErrReadOnly = errors.New("kv: read-only transaction")
	// ErrBucketNotFound: DeleteBucket of an absent bucket, or a write through
	// a Bucket handle whose bucket was deleted in this transaction.
	ErrBucketNotFound = errors.New("kv: bucket not found")
	// ErrBucketNameRequired: CreateBucket with an empty name.
	ErrBucketNameRequired = errors.New("kv: bucket name required")
	// ErrKeyRequired: Put with an empty key.
	ErrKeyRequired = errors.New("kv: key required")
	// ErrKeyTooLarge: a key or bucket name longer than MaxKeySize.
	ErrKeyTooLarge = errors.New("kv: key too large")
	// ErrValueTooLarge: a value longer than MaxValueSize.
	ErrValueTooLarge = errors.New("kv: value too large")
)

// DB is a transactional ordered key-value store. Its methods are safe for
// concurrent use.
type DB interface {
	// View runs fn in a read-only transaction over a consistent snapshot.
	// ctx is checked once before starting (a done ctx returns ctx.Err()); fn
	// is not interrupted. View returns fn's error unchanged, ErrClosed after
	// Close, or ctx.Err(). Views run concurrently with each other and with
	// the Update.
	View(ctx context.Context, fn func(Tx) error) error

	// Update runs fn in the single read-write transaction. It waits for the
	// previous Update to finish for as long as ctx allows (returning
	// ctx.Err() otherwise). If fn returns an error or panics, every write of
	// fn is discarded and the error is returned unchanged (the panic is
	// re-raised); otherwise the writes are committed atomically and, on a
	// durable engine, fsynced before Update returns nil. A commit failure is
	// returned and nothing is visible.
	Update(ctx context.Context, fn func(Tx) error) error

	// Close waits for running transactions to finish, makes pending and
	// later View and Update calls return ErrClosed, and releases the
	// engine. Calling it again returns nil. Do not call it from inside fn.
	Close() error
}

// Tx is one transaction. Buckets are top-level only.
type Tx interface {
	// Bucket returns the named bucket, or nil when it does not exist. The
	// same handle is returned for the same name within a transaction.
	Bucket(name string) Bucket

	// CreateBucket returns the named bucket, creating it empty if it does
	// not exist (a create-if-not-exists). Errors: ErrReadOnly,
	// ErrBucketNameRequired, ErrKeyTooLarge, ErrTxClosed.
	CreateBucket(name string) (Bucket, error)

	// DeleteBucket removes the named bucket and all its keys. Handles to it
	// then read as empty and fail writes with ErrBucketNotFound. Errors:
	// ErrBucketNotFound, ErrReadOnly, ErrTxClosed.
	DeleteBucket(name string) error
}

// Bucket is an ordered map from keys to values inside one transaction.
type Bucket interface {
	// Get returns the value of key, or nil when absent. A present key with
	// an empty value returns a non-nil empty slice. The slice is valid only
	// during the transaction and must not be modified.
	Get(key []byte) []byte

	// Put sets key to value, copying both. Errors: ErrKeyRequired,
	// ErrKeyTooLarge, ErrValueTooLarge, ErrReadOnly, ErrBucketNotFound,
	// ErrTxClosed.
	Put(key, value []byte) error

	// Delete removes key; deleting an absent key is not an error. Errors:
	// ErrReadOnly, ErrBucketNotFound, ErrTxClosed.
	Delete(key []byte) error

	// Cursor returns a new unpositioned cursor over the bucket.
	Cursor() Cursor
}

// Cursor walks a bucket in bytes.Compare order. Every method returns the key
// and value it lands on, or nil, nil when there is none; returned slices
// follow the Get rules. After a nil result, and before the first positioning
// call, Next and Prev return nil until First, Last or Seek repositions the
// cursor.
//
// The bucket may be modified while a cursor is open (for example deleting
// each key as it is visited): Next and Prev then continue from the cursor's
// last key in the bucket's current contents, so Next after deleting the
// current key lands on its successor.
type Cursor interface {
	// First moves to the smallest key.
	First() (k, v []byte)
	// Last moves to the largest key.
	Last() (k, v []byte)
	// Seek moves to the smallest key >= seek (for a prefix scan, Seek the
	// prefix and stop when bytes.HasPrefix fails).
	Seek(seek []byte) (k, v []byte)
	// Next moves to the following key.
	Next() (k, v []byte)
	// Prev moves to the preceding key.
	Prev() (k, v []byte)
}

// CheckPut validates a Put's key and value against the shared limits; both
// engines use it so they fail identically.
func CheckPut(key, value []byte) error {
	switch {
	case len(key) == 0:
		return ErrKeyRequired
	case len(key) > MaxKeySize:
		return ErrKeyTooLarge
	case int64(len(value)) > MaxValueSize:
		return ErrValueTooLarge
	}
	return nil
}

// CheckBucketName validates a bucket name for CreateBucket.
func CheckBucketName(name string) error {
	switch {
	case name == "":
		return ErrBucketNameRequired
	case len(name) > MaxKeySize:
		return ErrKeyTooLarge
	}
	return nil
}
