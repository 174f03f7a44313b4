package verify

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/mod/sumdb/tlog"
)

// state is what --state keeps between runs: the last verified checkpoint.
type state struct {
	Origin string `json:"origin"`
	Size   uint64 `json:"size"`
	Root   string `json:"root"` // std base64
}

// loadState reads the state file; a missing file is the zero state.
func loadState(path string) (state, tlog.Hash, error) {
	var s state
	var root tlog.Hash
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, root, nil
	}
	if err != nil {
		return s, root, fmt.Errorf("%w: state file: %v", ErrOptions, err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, root, fmt.Errorf("%w: state file %s: %v", ErrOptions, path, err)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(s.Root)
	if err != nil || len(raw) != tlog.HashSize {
		return s, root, fmt.Errorf("%w: state file %s: root %q is not base64 of 32 bytes", ErrOptions, path, s.Root)
	}
	copy(root[:], raw)
	return s, root, nil
}

// saveState replaces the state file atomically (temp file, fsync, rename).
func saveState(path string, s state) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".verify-state-*")
	if err != nil {
		return fmt.Errorf("verify: save state: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(append(data, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("verify: save state: %w", err)
	}
	return nil
}

// checkState proves the checkpoint consistent with the saved state and
// saves the new one.
func (r *run) checkState(ctx context.Context) error {
	old, oldRoot, err := loadState(r.opt.StateFile)
	if err != nil {
		return err
	}
	r.res.PreviousSize = old.Size
	if err := r.consistent(ctx, old, oldRoot); err != nil {
		return err
	}
	s := state{Origin: r.cp.Origin, Size: r.cp.Size, Root: base64.StdEncoding.EncodeToString(r.cp.Root[:])}
	if err := saveState(r.opt.StateFile, s); err != nil {
		return err
	}
	r.res.StateSaved = true
	return nil
}

// consistent checks that the tree of old.Size leaves with root oldRoot is
// a prefix of the checkpoint's tree (tlog.ProveTree over the served tiles,
// tlog.CheckTree against both roots).
func (r *run) consistent(ctx context.Context, old state, oldRoot tlog.Hash) error {
	cp := r.cp
	switch {
	case old.Size == 0:
		return nil
	case old.Origin != cp.Origin:
		return mismatch(CheckConsistency, "saved state is of origin %q, the log is %q", old.Origin, cp.Origin)
	case old.Size > cp.Size:
		return mismatch(CheckConsistency, "log shrank from size %d to %d", old.Size, cp.Size)
	case old.Size == cp.Size:
		if oldRoot != cp.Root {
			return mismatch(CheckConsistency, "size %d: root %s, saved %s (split view)", cp.Size, cp.Root, oldRoot)
		}
		return nil
	}
	thr := r.f.hashReader(ctx, tlog.Tree{N: int64(cp.Size), Hash: cp.Root})
	proof, err := tlog.ProveTree(int64(cp.Size), int64(old.Size), thr)
	if err != nil {
		return passThrough(err, CheckConsistency, int64(old.Size)-1)
	}
	if err := tlog.CheckTree(proof, int64(cp.Size), cp.Root, int64(old.Size), oldRoot); err != nil {
		return mismatch(CheckConsistency, "size %d root %s is not a prefix of size %d: %v (split view)",
			old.Size, oldRoot, cp.Size, err)
	}
	return nil
}
