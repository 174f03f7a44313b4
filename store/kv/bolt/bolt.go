// Package bolt is the durable kv engine: bbolt (go.etcd.io/bbolt) behind the
// kv interfaces. Every Update is committed with an fsync before it returns
// (unless Options.NoSync), so an acknowledged write survives kill -9.
//
// The wrapper adds what bbolt leaves to the caller, so that it behaves
// exactly like store/kv/memkv: ctx-aware waiting for the single writer,
// ErrClosed/ErrTxClosed/ErrReadOnly instead of panics, Put copying its
// arguments (bbolt keeps them until commit), and cursors that survive writes
// to their bucket.
package bolt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/internal/gate"
)

// ErrLocked is matched (errors.Is) by the Open error when another process,
// or another Open in this process, holds the file's lock for longer than
// Options.OpenTimeout. The error text contains "database locked by another
// process". The error also matches berrors.ErrTimeout.
var ErrLocked = errors.New("database locked by another process")

// DefaultOpenTimeout is used when Options.OpenTimeout is zero.
const DefaultOpenTimeout = time.Second

// Options configure Open.
type Options struct {
	// OpenTimeout bounds the wait for the file lock; 0 means
	// DefaultOpenTimeout.
	OpenTimeout time.Duration
	// NoSync skips the fsync on commit. Only for tests and benchmarks: it
	// voids the durability contract.
	NoSync bool
	// InitialMmapSize (bytes) reserves address space up front so that an
	// Update does not have to wait for open Views to remap the file while
	// the database is smaller than this; 0 keeps bbolt's default. Files up
	// to 16 MiB are grown to this size.
	InitialMmapSize int
}

// DB is a bbolt-backed kv.DB.
type DB struct {
	gate *gate.Gate
	bdb  *bbolt.DB
}

var _ kv.DB = (*DB)(nil)

// Open opens or creates the database file at path (mode 0600; missing parent
// directories are created 0750).
func Open(path string, opt Options) (*DB, error) {
	if opt.OpenTimeout <= 0 {
		opt.OpenTimeout = DefaultOpenTimeout
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("kv/bolt: open %s: %w", path, err)
	}
	bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:         opt.OpenTimeout,
		NoSync:          opt.NoSync,
		InitialMmapSize: opt.InitialMmapSize,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("kv/bolt: open %s: %w (%w)", path, ErrLocked, err)
	}
	if err != nil {
		return nil, fmt.Errorf("kv/bolt: open %s: %w", path, err)
	}
	return &DB{gate: gate.New(), bdb: bdb}, nil
}

// Path returns the database file's path.
func (db *DB) Path() string { return db.bdb.Path() }

// View implements kv.DB.
func (db *DB) View(ctx context.Context, fn func(kv.Tx) error) error {
	release, err := db.gate.Enter(ctx, false)
	if err != nil {
		return err
	}
	defer release()
	return mapErr(db.bdb.View(func(btx *bbolt.Tx) error { return run(btx, fn) }))
}

// Update implements kv.DB. The commit is fsynced unless Options.NoSync.
func (db *DB) Update(ctx context.Context, fn func(kv.Tx) error) error {
	release, err := db.gate.Enter(ctx, true)
	if err != nil {
		return err
	}
	defer release()
	return mapErr(db.bdb.Update(func(btx *bbolt.Tx) error { return run(btx, fn) }))
}

// run calls fn with a wrapper that is closed when fn returns or panics.
func run(btx *bbolt.Tx, fn func(kv.Tx) error) error {
	t := &tx{btx: btx, handles: map[string]*bucket{}}
	defer func() { t.closed = true }()
	return fn(t)
}

// mapErr turns bbolt's closed-database error into kv.ErrClosed; fn's own
// errors pass through unchanged.
func mapErr(err error) error {
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return kv.ErrClosed
	}
	return err
}

// Close implements kv.DB.
func (db *DB) Close() error {
	if !db.gate.Close() {
		return nil
	}
	if err := db.bdb.Close(); err != nil {
		return fmt.Errorf("kv/bolt: close: %w", err)
	}
	return nil
}

// Stats is a snapshot of bbolt's counters.
type Stats struct {
	FreePages    int // pages on the freelist
	PendingPages int // pages freed but still held by open readers
	FreeBytes    int // bytes in free pages
	ReadTxs      int // read transactions started
	OpenReadTxs  int // read transactions open now
}

// Stats returns bbolt's current counters; cheap (no transaction).
func (db *DB) Stats() Stats {
	s := db.bdb.Stats()
	return Stats{
		FreePages:    s.FreePageN,
		PendingPages: s.PendingPageN,
		FreeBytes:    s.FreeAlloc,
		ReadTxs:      s.TxN,
		OpenReadTxs:  s.OpenTxN,
	}
}
