package verify

import (
	"context"
	"errors"

	"golang.org/x/mod/sumdb/tlog"
)

// checkTiles fetches every hash tile of the tree not compared yet, level
// by level from the bottom, compares each with the hashes known from the
// level below (adopting those of the pruned prefix), then recomputes the
// root and compares it with the checkpoint's.
func (r *run) checkTiles(ctx context.Context) error {
	firstBundle := r.minIndex / tileWidth
	for level := range r.levels.hashes {
		count := uint64(len(r.levels.hashes[level]))
		for n := uint64(0); n*tileWidth < count; n++ {
			if level == 0 && n >= firstBundle {
				continue // compared with its bundle
			}
			if err := r.compareTile(ctx, level, n, true); err != nil {
				return err
			}
		}
		r.levels.lift(level)
	}
	root, err := r.levels.root()
	if err != nil {
		return mismatch(CheckRoot, "cannot recompute the root: %v", err)
	}
	if root != r.cp.Root {
		return mismatch(CheckRoot, "recomputed root %s ≠ checkpoint root %s (size %d)", root, r.cp.Root, r.cp.Size)
	}
	return nil
}

// compareTile fetches hash tile (level, n) at the width the checkpoint
// covers and compares it. With pruned set, a 410 for a tile lying wholly
// below min_index is accepted (the C2SP minimum index); any other 410 is
// an error.
func (r *run) compareTile(ctx context.Context, level int, n uint64, pruned bool) error {
	count := uint64(len(r.levels.hashes[level]))
	t := tlog.Tile{H: tileHeight, L: level, N: int64(n), W: width(count, n)}
	data, err := r.f.get(ctx, tileURLPath(t), maxTile)
	if err != nil {
		end := (n*tileWidth + uint64(t.W)) << (tileHeight * level)
		if pruned && isGone(err) && end <= r.minIndex {
			return nil
		}
		return err
	}
	if len(data) != t.W*tlog.HashSize {
		return atVersion(n*tileWidth<<(tileHeight*level), CheckTile, "%s: %d bytes, want %d",
			tileURLPath(t), len(data), t.W*tlog.HashSize)
	}
	r.res.Tiles++
	if m := r.levels.compareTile(level, n, data); m != nil {
		return m
	}
	return nil
}

// checkInclusion proves the last leaf's inclusion with tlog's
// authenticating tile reader, independently of the level arithmetic.
func (r *run) checkInclusion(ctx context.Context) error {
	size := int64(r.cp.Size)
	thr := r.f.hashReader(ctx, tlog.Tree{N: size, Hash: r.cp.Root})
	proof, err := tlog.ProveRecord(size, size-1, thr)
	if err != nil {
		return passThrough(err, CheckInclusion, size-1)
	}
	if err := tlog.CheckRecord(proof, size, r.cp.Root, size-1, tlog.RecordHash(r.chain.lastLeaf)); err != nil {
		return atVersion(uint64(size-1), CheckInclusion, "%v", err)
	}
	return nil
}

// passThrough returns transport and HTTP errors (and Mismatches) as they
// are and turns any other tlog error into a Mismatch of check.
func passThrough(err error, check string, v int64) error {
	var m *Mismatch
	var ue *UnreachableError
	if errors.As(err, &m) || errors.As(err, &ue) || code(err) != "" {
		return err
	}
	return atVersion(uint64(v), check, "%v", err)
}
