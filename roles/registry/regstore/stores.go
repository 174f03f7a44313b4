package regstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/bolt"
	"github.com/ronhq/ron/store/kv/memkv"
)

// Store layout under <data>/registry (docs/registry.md §5) and timeouts.
const (
	// DirName is the registry's folder in the data directory.
	DirName = registryapi.RoleName
	// LogDirName is the segment log's folder in DirName.
	LogDirName = "log"
	// RegistryDB is registry.db's file name in DirName.
	RegistryDB = "registry.db"
	// TlogDB is tlog.db's file name in DirName.
	TlogDB = "tlog.db"
	// AmnesiaRoot is the MemFS directory of amnesia mode.
	AmnesiaRoot = "/ron-amnesia/registry"
	// OpenTimeout is the bbolt file lock wait.
	OpenTimeout = time.Second
	// StoreTimeout bounds one registry.db or tlog.db transaction at start
	// or stop.
	StoreTimeout = 10 * time.Second
)

// Stores are the role's opened persistent state: registry.db, tlog.db, the
// segment log (recovered) and the log key.
type Stores struct {
	Dir    string           // <data>/registry, or the MemFS directory in amnesia
	RegDB  kv.DB            // registry.db, the committer's database
	TlogDB kv.DB            // tlog.db, the Merkle tree's database
	Key    *tiles.LogKey    // the log key that signs checkpoints
	Log    *segment.Log     // the segment log, recovered
	Rec    segment.Recovery // what the recovery found
	fs     segment.FS
	open   []func() error // closers, in opening order
}

// Spec is what opening the stores needs from the config.
type Spec struct {
	DataDir        string // the process data dir (unused in amnesia)
	Amnesia        bool   // everything in memory: memkv, MemFS, a fresh log key
	Origin         string // log_origin; "" = the key's (or a new default) origin
	SegmentRecords int    // records per segment file
}

// Open opens (creating when missing) every store of spec and runs the
// log's recovery. On error everything opened so far is closed.
func Open(ctx context.Context, spec Spec) (*Stores, error) {
	s := &Stores{}
	err := s.openKV(spec)
	if err == nil {
		err = s.openKey(spec)
	}
	if err == nil {
		err = s.checkOrigin(ctx)
	}
	if err == nil {
		err = s.openLog(ctx, spec)
	}
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// openKV opens the two databases: memkv in amnesia, else bbolt files in
// <data>/registry (0700).
func (s *Stores) openKV(spec Spec) error {
	if spec.Amnesia {
		s.Dir, s.fs = AmnesiaRoot, segment.NewMemFS()
		s.RegDB, s.TlogDB = memkv.New(), memkv.New()
		s.open = append(s.open, s.RegDB.Close, s.TlogDB.Close)
		return nil
	}
	s.Dir, s.fs = filepath.Join(spec.DataDir, DirName), segment.OSFS{}
	if err := ensureDir(s.Dir); err != nil {
		return err
	}
	db, err := openBolt(filepath.Join(s.Dir, RegistryDB), "registry database")
	if err != nil {
		return err
	}
	s.RegDB = db
	s.open = append(s.open, db.Close)
	if db, err = openBolt(filepath.Join(s.Dir, TlogDB), "registry tlog database"); err != nil {
		return err
	}
	s.TlogDB = db
	s.open = append(s.open, db.Close)
	return nil
}

// ensureDir creates dir with mode 0700 (and enforces the mode when it
// exists).
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("registry: create %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("registry: mode of %s: %w", dir, err)
	}
	return nil
}

// openBolt opens one bbolt file, waiting at most OpenTimeout for its lock.
func openBolt(path, what string) (kv.DB, error) {
	db, err := bolt.Open(path, bolt.Options{OpenTimeout: OpenTimeout})
	if errors.Is(err, bolt.ErrLocked) {
		return nil, fmt.Errorf("%s locked by another process: %s", what, path)
	}
	if err != nil {
		return nil, fmt.Errorf("registry: open %s: %w", path, err)
	}
	return db, nil
}

// openKey loads (or creates) the log key: <data>/keys/registry-log.key, or
// a fresh in-memory key in amnesia. A key naming another origin than a
// configured log_origin fails: the origin is fixed once the log exists.
func (s *Stores) openKey(spec Spec) error {
	var err error
	if spec.Amnesia {
		s.Key, err = tiles.NewLogKey(spec.Origin)
	} else {
		s.Key, err = tiles.LoadOrCreateLogKey(spec.DataDir, spec.Origin)
	}
	if errors.Is(err, tiles.ErrOriginMismatch) {
		return fmt.Errorf("registry.log_origin: the origin is fixed when the log is created: %w", err)
	}
	if err != nil {
		return fmt.Errorf("registry: log key: %w", err)
	}
	return nil
}

// checkOrigin records the key's origin in registry.db meta/origin, or
// checks it against the recorded one.
func (s *Stores) checkOrigin(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, StoreTimeout)
	defer cancel()
	origin := s.Key.Origin()
	return s.RegDB.Update(ctx, func(tx kv.Tx) error {
		b, err := tx.CreateBucket(committer.BucketMeta)
		if err != nil {
			return err
		}
		stored := b.Get([]byte(committer.KeyOrigin))
		if stored == nil {
			return b.Put([]byte(committer.KeyOrigin), []byte(origin))
		}
		if string(stored) != origin {
			return fmt.Errorf("registry.log_origin: registry.db records origin %q but the log key names %q", stored, origin)
		}
		return nil
	})
}

// openLog opens the segment log with the durable HEAD and min_index of
// registry.db and runs its recovery (docs/registry.md §5).
func (s *Stores) openLog(ctx context.Context, spec Spec) error {
	ctx, cancel := context.WithTimeout(ctx, StoreTimeout)
	defer cancel()
	head, err := committer.DurableHead(ctx, s.RegDB)
	if err != nil {
		return fmt.Errorf("registry: read HEAD: %w", err)
	}
	minIndex, err := committer.MinIndex(ctx, s.RegDB)
	if err != nil {
		return fmt.Errorf("registry: read min_index: %w", err)
	}
	l, rec, err := segment.Open(filepath.Join(s.Dir, LogDirName), segment.Options{FS: s.fs,
		SegmentRecords: spec.SegmentRecords, Check: committer.CheckRecord, MinIndex: minIndex, DurableHead: head})
	if err != nil {
		return fmt.Errorf("registry: recover log: %w", err)
	}
	s.Log, s.Rec = l, rec
	s.open = append(s.open, l.Close)
	return nil
}

// Empty reports whether no log exists yet: no record and no stored HEAD.
func (s *Stores) Empty(ctx context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, StoreTimeout)
	defer cancel()
	head, err := committer.DurableHead(ctx, s.RegDB)
	return head < 0 && s.Log.Next() == 0, err
}

// Bytes is the size of the stores on disk: the segments plus registry.db
// and tlog.db (the segments alone in amnesia).
func (s *Stores) Bytes() int64 {
	n := s.Log.Bytes()
	if _, mem := s.fs.(*segment.MemFS); mem {
		return n
	}
	for _, name := range []string{RegistryDB, TlogDB} {
		if fi, err := os.Stat(filepath.Join(s.Dir, name)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// Close closes everything opened, newest first, and returns the first
// error.
func (s *Stores) Close() error {
	var first error
	for i := len(s.open) - 1; i >= 0; i-- {
		if err := s.open[i](); err != nil && first == nil {
			first = err
		}
	}
	s.open = nil
	return first
}
