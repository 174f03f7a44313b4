package fs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/ronhq/ron/store/durable"
	"io"
	"os"

	"github.com/oklog/ulid/v2"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/bao"
)

// Open opens the object for verified reading. Its sidecar is loaded from the
// cache or disk; a missing or invalid one is rebuilt by hashing the data
// (OnSidecarRebuilt), and data that does not hash to id is quarantined
// (OnCorrupt, *store.CorruptError with Chunk -1).
func (s *Store) Open(ctx context.Context, id store.ID) (store.Object, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	f, err := openRead(s.dataPath(id))
	if err != nil {
		return nil, s.missing(id, err)
	}
	fi, err := f.Stat()
	if err == nil {
		var sc *store.Sidecar
		if sc, err = s.sidecar(ctx, id, fi.Size()); err == nil {
			return &object{s: s, f: f, sc: sc}, nil
		}
	}
	f.Close()
	return nil, err
}

// Stat describes the object (sidecar loaded or rebuilt as for Open).
func (s *Store) Stat(ctx context.Context, id store.ID) (store.Info, error) {
	if err := s.check(ctx); err != nil {
		return store.Info{}, err
	}
	fi, err := os.Stat(s.dataPath(id))
	if err != nil {
		return store.Info{}, s.missing(id, err)
	}
	sc, err := s.sidecar(ctx, id, fi.Size())
	if err != nil {
		return store.Info{}, err
	}
	return sc.Info(), nil
}

// missing maps a failed data lookup to ErrNotFound or ErrQuarantined.
func (s *Store) missing(id store.ID, err error) error {
	if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("fs: open %s: %w", id.Prefix(), err)
	}
	if s.isQuarantined(id) {
		return store.ErrQuarantined
	}
	return store.ErrNotFound
}

// sidecar returns the valid sidecar of id whose data file has size bytes.
func (s *Store) sidecar(ctx context.Context, id store.ID, size int64) (*store.Sidecar, error) {
	if sc, ok := s.cache.get(id); ok && sc.Size == size {
		return sc, nil
	}
	b, err := os.ReadFile(s.metaPath(id))
	if err == nil {
		sc, derr := store.DecodeSidecar(b, id)
		if derr == nil && sc.Size == size {
			s.cache.add(&sc)
			return &sc, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("fs: read sidecar: %w", err)
	}
	return s.rebuildOnce(ctx, id, nil)
}

// rebuildOnce runs rebuild for id once at a time: concurrent callers share
// the first one's result.
func (s *Store) rebuildOnce(ctx context.Context, id store.ID, old *store.Sidecar) (*store.Sidecar, error) {
	v, err, _ := s.rebuilds.Do(id.Hex(), func() (any, error) { return s.rebuild(ctx, id, old) })
	if err != nil {
		return nil, err
	}
	return v.(*store.Sidecar), nil
}

// rebuild hashes the data file (under the CPU semaphore) and writes a new
// v2 sidecar; data not hashing to id is quarantined. old, the valid v1
// sidecar being upgraded, gives its content type and creation time; nil
// (a missing or invalid sidecar: OnSidecarRebuilt) takes the data file's
// time and no content type.
func (s *Store) rebuild(ctx context.Context, id store.ID, old *store.Sidecar) (*store.Sidecar, error) {
	select {
	case s.cpu <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.cpu }()
	f, err := openRead(s.dataPath(id))
	if err != nil {
		return nil, s.missing(id, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	ob, sum, err := bao.Encode(bufio.NewReaderSize(f, store.ReadSize), fi.Size())
	if err != nil {
		return nil, fmt.Errorf("fs: hash %s: %w", id.Prefix(), err)
	}
	if sum != id {
		return nil, s.corrupt(f, id, -1)
	}
	sc := store.NewSidecar(id, fi.Size(), ob, store.Meta{}, fi.ModTime())
	if old != nil && old.Size == fi.Size() {
		sc = old.Upgraded(ob)
	}
	if err := s.writeSidecar(ulid.Make().String(), &sc); err != nil {
		return nil, err
	}
	if err := durable.SyncDir(s.shardDir(id)); err != nil {
		return nil, fmt.Errorf("fs: fsync shard: %w", err)
	}
	s.cache.add(&sc)
	if old == nil {
		s.hooks.SidecarRebuilt(id)
	}
	return &sc, nil
}

// corrupt quarantines the object whose open data file is f (unless it was
// already moved or replaced), calls OnCorrupt and returns the CorruptError.
func (s *Store) corrupt(f *os.File, id store.ID, chunk int) error {
	if moved, _ := s.quarantine(id, f); moved {
		s.hooks.Corrupt(id, chunk, store.KindData)
	}
	return &store.CorruptError{ID: id, Chunk: chunk, Kind: store.KindData}
}

// object is an open fs object.
type object struct {
	s  *Store
	f  *os.File
	sc *store.Sidecar
}

func (o *object) Info() store.Info       { return o.sc.Info() }
func (o *object) Outboard() bao.Outboard { return o.sc.Outboard }
func (o *object) Close() error           { return o.f.Close() }

// ReadChunk reads chunk i with ReadAt and verifies it; a short file counts
// as corruption.
func (o *object) ReadChunk(i int, buf []byte) ([]byte, error) {
	n, err := store.CheckChunkArgs(o.sc.Size, i, buf)
	if err != nil {
		return nil, err
	}
	b := buf[:n]
	if _, err := o.f.ReadAt(b, int64(i)*store.ChunkSize); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, o.s.corrupt(o.f, o.sc.Digest, i)
		}
		return nil, fmt.Errorf("fs: read %s chunk %d: %w", o.sc.Digest.Prefix(), i, err)
	}
	if err := o.sc.CheckChunk(i, b); err != nil {
		return nil, o.s.corrupt(o.f, o.sc.Digest, i)
	}
	return b, nil
}
