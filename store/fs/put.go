package fs

import (
	"context"
	"errors"
	"fmt"
	"github.com/ronhq/ron/store/durable"
	"io"
	"os"
	"path/filepath"

	"github.com/oklog/ulid/v2"
	"github.com/ronhq/ron/store"
)

// Commit steps at which internal tests simulate a crash.
const (
	stepTempSynced     = "temp-synced"
	stepSidecarRenamed = "sidecar-renamed"
	stepDataRenamed    = "data-renamed"
	stepBeforeDirSync  = "before-dir-sync"
)

// crashError marks a simulated crash: Put returns without any cleanup.
type crashError struct{ err error }

func (e crashError) Error() string { return "fs: simulated crash: " + e.err.Error() }
func (e crashError) Unwrap() error { return e.err }

// Put streams r into tmp/<ulid>.part while hashing it (after it, when
// opt.Size did not state its length), then commits it as
// described in docs/storage.md §3: fsync the temp file; stop with created=false if
// the object exists; write and rename the sidecar; rename the data without
// replacing (a concurrent winner also yields created=false); fsync the shard
// directory. On every error the temp file is removed and nothing is visible.
func (s *Store) Put(ctx context.Context, r io.Reader, opt store.PutOptions) (store.Info, bool, error) {
	if err := s.check(ctx); err != nil {
		return store.Info{}, false, err
	}
	if err := opt.Meta.Validate(); err != nil {
		return store.Info{}, false, err
	}
	if err := s.checkFree(); err != nil {
		return store.Info{}, false, err
	}
	name := ulid.Make().String()
	tmp := filepath.Join(s.tmpDir, name+".part")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return store.Info{}, false, fmt.Errorf("fs: create temp: %w", err)
	}
	info, created, err := s.put(ctx, f, name, r, opt)
	var crash crashError
	if errors.As(err, &crash) {
		return store.Info{}, false, err
	}
	if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = fmt.Errorf("fs: remove temp: %w", rerr)
	}
	return info, created, err
}

// put writes and commits; it always closes f but never removes the temp.
func (s *Store) put(ctx context.Context, f *os.File, name string, r io.Reader, opt store.PutOptions) (store.Info, bool, error) {
	in, err := s.receive(ctx, f, r, opt)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("fs: close temp: %w", cerr)
	}
	if err != nil {
		return store.Info{}, false, err
	}
	if err := s.fail(stepTempSynced); err != nil {
		return store.Info{}, false, crashError{err}
	}
	return s.commit(ctx, name, in, opt.Meta)
}

// receive streams r into f, checks the digest against opt.Want and fsyncs f.
func (s *Store) receive(ctx context.Context, f *os.File, r io.Reader, opt store.PutOptions) (store.Ingested, error) {
	w := &spaceWriter{f: f, s: s}
	in, err := store.Ingest(ctx, r, store.IngestOptions{MaxBytes: opt.MaxBytes, Size: opt.Size}, w.write)
	if err != nil {
		return in, err
	}
	if err := in.Finish(io.NewSectionReader(f, 0, in.Size)); err != nil {
		return in, fmt.Errorf("fs: %w", err)
	}
	if opt.Want != nil && *opt.Want != in.ID {
		return in, &store.HashMismatchError{Expected: *opt.Want, Actual: in.ID}
	}
	if err := f.Sync(); err != nil {
		return in, fmt.Errorf("fs: fsync temp: %w", err)
	}
	return in, ctx.Err()
}

// spaceWriter writes to the temp file and re-checks free space every
// checkEvery bytes.
type spaceWriter struct {
	f       *os.File
	s       *Store
	pending int64
}

func (w *spaceWriter) write(b []byte) error {
	if _, err := w.f.Write(b); err != nil {
		return fmt.Errorf("fs: write temp: %w", err)
	}
	w.pending += int64(len(b))
	if w.pending >= w.s.checkEvery {
		w.pending = 0
		return w.s.checkFree()
	}
	return nil
}

// commit publishes tmp/<name>.part as the object in.ID.
func (s *Store) commit(ctx context.Context, name string, in store.Ingested, meta store.Meta) (store.Info, bool, error) {
	data := s.dataPath(in.ID)
	if _, err := os.Lstat(data); err == nil {
		return s.existing(ctx, in), false, nil
	}
	if err := s.ensureShard(in.ID); err != nil {
		return store.Info{}, false, fmt.Errorf("fs: shard dir: %w", err)
	}
	sc := store.NewSidecar(in.ID, in.Size, in.Outboard, meta, s.now())
	if err := s.writeSidecar(name, &sc); err != nil {
		return store.Info{}, false, err
	}
	if err := s.fail(stepSidecarRenamed); err != nil {
		return store.Info{}, false, crashError{err}
	}
	err := durable.RenameNoReplace(filepath.Join(s.tmpDir, name+".part"), data)
	if errors.Is(err, durable.ErrExists) {
		return s.existing(ctx, in), false, nil
	}
	if err != nil {
		return store.Info{}, false, fmt.Errorf("fs: publish: %w", err)
	}
	return s.published(&sc)
}

// published finishes a commit whose data rename succeeded.
func (s *Store) published(sc *store.Sidecar) (store.Info, bool, error) {
	if err := s.fail(stepDataRenamed); err != nil {
		return store.Info{}, false, crashError{err}
	}
	if err := s.fail(stepBeforeDirSync); err != nil {
		return store.Info{}, false, crashError{err}
	}
	s.objects.Add(1)
	s.bytes.Add(sc.Size)
	s.cache.add(sc)
	if err := durable.SyncDir(s.shardDir(sc.Digest)); err != nil {
		return store.Info{}, false, fmt.Errorf("fs: fsync shard: %w", err)
	}
	return sc.Info(), true, nil
}

// writeSidecar writes sc to tmp/<name>.meta, fsyncs it and renames it next
// to the data (replacing any sidecar there).
func (s *Store) writeSidecar(name string, sc *store.Sidecar) error {
	tmp := filepath.Join(s.tmpDir, name+".meta")
	if err := durable.WriteFileSync(tmp, store.EncodeSidecar(*sc), fileMode); err != nil {
		return fmt.Errorf("fs: write sidecar: %w", err)
	}
	if err := os.Rename(tmp, s.metaPath(sc.Digest)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("fs: rename sidecar: %w", err)
	}
	return nil
}

// existing describes an object that was already held: the stored metadata
// when readable, else what this upload computed.
func (s *Store) existing(ctx context.Context, in store.Ingested) store.Info {
	if info, err := s.Stat(ctx, in.ID); err == nil {
		return info
	}
	return store.Info{ID: in.ID, Size: in.Size, Chunks: store.ChunkCount(in.Size)}
}
