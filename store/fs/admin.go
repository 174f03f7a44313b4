package fs

import (
	"context"
	"errors"
	"fmt"
	"github.com/ronhq/ron/store/durable"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ronhq/ron/store"
)

// Delete removes the data, then the sidecar, and fsyncs the shard directory.
func (s *Store) Delete(ctx context.Context, id store.ID) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	data := s.dataPath(id)
	fi, err := os.Lstat(data)
	if err == nil {
		err = os.Remove(data)
	}
	if errors.Is(err, os.ErrNotExist) {
		return store.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("fs: delete: %w", err)
	}
	s.objects.Add(-1)
	s.bytes.Add(-fi.Size())
	s.cache.remove(id)
	if err := os.Remove(s.metaPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("fs: delete sidecar: %w", err)
	}
	return durable.SyncDir(s.shardDir(id))
}

// Quarantine moves data and sidecar to quarantine/<hex>.<unix_ms>[.meta].
// reason is informational.
func (s *Store) Quarantine(ctx context.Context, id store.ID, reason string) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	moved, err := s.quarantine(id, nil)
	if err == nil && !moved {
		err = store.ErrNotFound
	}
	return err
}

// quarantine moves the object away. With f set, it does so only if the data
// file is still the one f has open. moved reports whether data was moved.
func (s *Store) quarantine(id store.ID, f *os.File) (moved bool, err error) {
	data := s.dataPath(id)
	fi, err := os.Lstat(data)
	if errors.Is(err, os.ErrNotExist) {
		return false, store.ErrNotFound
	}
	if err != nil {
		return false, err
	}
	if f != nil {
		if ofi, err := f.Stat(); err != nil || !os.SameFile(fi, ofi) {
			return false, nil
		}
	}
	dst := filepath.Join(s.qDir, fmt.Sprintf("%s.%d", id.Hex(), s.now().UnixMilli()))
	if err := os.Rename(data, dst); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, store.ErrNotFound
		}
		return false, fmt.Errorf("fs: quarantine: %w", err)
	}
	s.noteQuarantined(id, fi.Size())
	if err := os.Rename(s.metaPath(id), dst+".meta"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return true, fmt.Errorf("fs: quarantine sidecar: %w", err)
	}
	if err := durable.SyncDir(s.shardDir(id)); err != nil {
		return true, err
	}
	return true, durable.SyncDir(s.qDir)
}

func (s *Store) noteQuarantined(id store.ID, size int64) {
	s.cache.remove(id)
	s.objects.Add(-1)
	s.bytes.Add(-size)
	s.qmu.Lock()
	s.qset[id]++
	s.qmu.Unlock()
}

// Has reports which ids have a data file.
func (s *Store) Has(ctx context.Context, ids []store.ID) ([]bool, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	out := make([]bool, len(ids))
	for i, id := range ids {
		fi, err := os.Lstat(s.dataPath(id))
		out[i] = err == nil && fi.Mode().IsRegular()
	}
	return out, nil
}

// List walks objects/ in hex order. ID, Size and Chunks are set.
func (s *Store) List(ctx context.Context, after *store.ID, limit int) ([]store.Info, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	var from string
	if after != nil {
		from = after.Hex()
	}
	var out []store.Info
	err := s.walk(ctx, from, func(dir string, e fs.DirEntry) (bool, error) {
		id, ok := dataName(e.Name())
		if !ok || e.Name() <= from {
			return false, nil
		}
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			return false, nil // removed meanwhile
		}
		out = append(out, store.Info{ID: id, Size: fi.Size(), Created: fi.ModTime(), Chunks: store.ChunkCount(fi.Size())})
		return limit > 0 && len(out) >= limit, nil
	})
	return out, err
}

// dataName parses a data file name (64 lowercase hex).
func dataName(name string) (store.ID, bool) {
	if len(name) != 64 {
		return store.ID{}, false
	}
	id, err := store.ParseID("b3:" + name)
	return id, err == nil
}

// walk calls fn for every entry of every shard directory in name order,
// skipping shards before from's; fn returns stop=true to end the walk.
func (s *Store) walk(ctx context.Context, from string, fn func(dir string, e fs.DirEntry) (bool, error)) error {
	tops, err := readDir(s.objDir)
	if err != nil {
		return err
	}
	for _, t := range tops {
		if len(t.Name()) != 2 || (from != "" && t.Name() < from[:2]) {
			continue
		}
		stop, err := s.walkTop(ctx, filepath.Join(s.objDir, t.Name()), t.Name(), from, fn)
		if stop || err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) walkTop(ctx context.Context, top, name, from string, fn func(string, fs.DirEntry) (bool, error)) (bool, error) {
	subs, err := readDir(top)
	if err != nil {
		return false, err
	}
	for _, sub := range subs {
		if len(sub.Name()) != 2 || (from != "" && name+sub.Name() < from[:4]) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return true, err
		}
		dir := filepath.Join(top, sub.Name())
		ents, err := readDir(dir)
		if err != nil {
			return true, err
		}
		for _, e := range ents {
			if stop, err := fn(dir, e); stop || err != nil {
				return true, err
			}
		}
	}
	return false, nil
}

// readDir lists dir sorted by name; a missing dir is empty.
func readDir(dir string) ([]fs.DirEntry, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return ents, err
}

// Recount walks all objects and resets the object and byte counters. It may
// run in the background; writes during the walk may or may not be counted.
func (s *Store) Recount(ctx context.Context) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	var n, b int64
	err := s.walk(ctx, "", func(_ string, e fs.DirEntry) (bool, error) {
		if _, ok := dataName(e.Name()); ok {
			if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
				n, b = n+1, b+fi.Size()
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	s.objects.Store(n)
	s.bytes.Store(b)
	return nil
}

// Sweep removes quarantined files older than QuarantineKeep and sidecars
// without data older than OrphanSidecarAge. It returns how many files it
// removed.
func (s *Store) Sweep(ctx context.Context) (int, error) {
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	n, err := s.sweepQuarantine()
	if err != nil {
		return n, err
	}
	m, err := s.sweepOrphans(ctx)
	return n + m, err
}

func (s *Store) sweepQuarantine() (int, error) {
	ents, err := os.ReadDir(s.qDir)
	if err != nil {
		return 0, err
	}
	cutoff := s.now().Add(-s.opt.QuarantineKeep)
	removed := 0
	for _, e := range ents {
		id, ms, meta, ok := parseQuarantineName(e.Name())
		if !ok || ms > cutoff.UnixMilli() {
			continue
		}
		if err := os.Remove(filepath.Join(s.qDir, e.Name())); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return removed, err
		}
		removed++
		if !meta {
			s.unquarantine(id)
		}
	}
	return removed, nil
}

func (s *Store) unquarantine(id store.ID) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.qset[id]--; s.qset[id] <= 0 {
		delete(s.qset, id)
	}
}

func (s *Store) sweepOrphans(ctx context.Context) (int, error) {
	cutoff := s.now().Add(-OrphanSidecarAge)
	removed := 0
	err := s.walk(ctx, "", func(dir string, e fs.DirEntry) (bool, error) {
		h, ok := strings.CutSuffix(e.Name(), ".meta")
		if _, valid := dataName(h); !ok || !valid {
			return false, nil
		}
		if _, err := os.Lstat(filepath.Join(dir, h)); !errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		if fi, err := e.Info(); err != nil || fi.ModTime().After(cutoff) {
			return false, nil
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err == nil {
			removed++
		}
		return false, nil
	})
	return removed, err
}
