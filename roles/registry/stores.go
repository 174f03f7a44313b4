package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/bolt"
	"github.com/ronhq/ron/store/kv/memkv"
)

// Store layout under <data>/registry (docs/registry.md §5) and timeouts.
const (
	registryDir  = "registry"
	logDir       = "log"
	registryDB   = "registry.db"
	tlogDB       = "tlog.db"
	amnesiaRoot  = "/ron-amnesia/registry" // the MemFS directory of amnesia mode
	openTimeout  = time.Second             // bbolt file lock wait
	storeTimeout = 10 * time.Second        // one registry.db or tlog.db transaction at start or stop
)

// stores are the role's opened persistent state: registry.db, tlog.db, the
// segment log (recovered) and the log key.
type stores struct {
	dir    string // <data>/registry, or the MemFS directory in amnesia
	fs     segment.FS
	regDB  kv.DB
	tlogDB kv.DB
	key    *tiles.LogKey
	log    *segment.Log
	rec    segment.Recovery
	open   []func() error // closers, in opening order
}

// storeSpec is what opening the stores needs from the config.
type storeSpec struct {
	dataDir        string
	amnesia        bool
	origin         string // log_origin; "" = the key's (or a new default) origin
	segmentRecords int
}

// openStores opens (creating when missing) every store of spec and runs
// the log's recovery. On error everything opened so far is closed.
func openStores(ctx context.Context, spec storeSpec) (*stores, error) {
	s := &stores{}
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
		_ = s.close()
		return nil, err
	}
	return s, nil
}

// openKV opens the two databases: memkv in amnesia, else bbolt files in
// <data>/registry (0700).
func (s *stores) openKV(spec storeSpec) error {
	if spec.amnesia {
		s.dir, s.fs = amnesiaRoot, segment.NewMemFS()
		s.regDB, s.tlogDB = memkv.New(), memkv.New()
		s.open = append(s.open, s.regDB.Close, s.tlogDB.Close)
		return nil
	}
	s.dir, s.fs = filepath.Join(spec.dataDir, registryDir), segment.OSFS{}
	if err := ensureDir(s.dir); err != nil {
		return err
	}
	db, err := openBolt(filepath.Join(s.dir, registryDB), "registry database")
	if err != nil {
		return err
	}
	s.regDB = db
	s.open = append(s.open, db.Close)
	if db, err = openBolt(filepath.Join(s.dir, tlogDB), "registry tlog database"); err != nil {
		return err
	}
	s.tlogDB = db
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

// openBolt opens one bbolt file, waiting at most openTimeout for its lock.
func openBolt(path, what string) (kv.DB, error) {
	db, err := bolt.Open(path, bolt.Options{OpenTimeout: openTimeout})
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
func (s *stores) openKey(spec storeSpec) error {
	var err error
	if spec.amnesia {
		s.key, err = tiles.NewLogKey(spec.origin)
	} else {
		s.key, err = tiles.LoadOrCreateLogKey(spec.dataDir, spec.origin)
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
func (s *stores) checkOrigin(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	origin := s.key.Origin()
	return s.regDB.Update(ctx, func(tx kv.Tx) error {
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
func (s *stores) openLog(ctx context.Context, spec storeSpec) error {
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	head, err := committer.DurableHead(ctx, s.regDB)
	if err != nil {
		return fmt.Errorf("registry: read HEAD: %w", err)
	}
	minIndex, err := committer.MinIndex(ctx, s.regDB)
	if err != nil {
		return fmt.Errorf("registry: read min_index: %w", err)
	}
	l, rec, err := segment.Open(filepath.Join(s.dir, logDir), segment.Options{FS: s.fs,
		SegmentRecords: spec.segmentRecords, Check: committer.CheckRecord, MinIndex: minIndex, DurableHead: head})
	if err != nil {
		return fmt.Errorf("registry: recover log: %w", err)
	}
	s.log, s.rec = l, rec
	s.open = append(s.open, l.Close)
	return nil
}

// empty reports whether no log exists yet: no record and no stored HEAD.
func (s *stores) empty(ctx context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	head, err := committer.DurableHead(ctx, s.regDB)
	return head < 0 && s.log.Next() == 0, err
}

// bytes is the size of the stores on disk: the segments plus registry.db
// and tlog.db (the segments alone in amnesia).
func (s *stores) bytes() int64 {
	n := s.log.Bytes()
	if _, mem := s.fs.(*segment.MemFS); mem {
		return n
	}
	for _, name := range []string{registryDB, tlogDB} {
		if fi, err := os.Stat(filepath.Join(s.dir, name)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// close closes everything opened, newest first, and returns the first
// error.
func (s *stores) close() error {
	var first error
	for i := len(s.open) - 1; i >= 0; i-- {
		if err := s.open[i](); err != nil && first == nil {
			first = err
		}
	}
	s.open = nil
	return first
}
