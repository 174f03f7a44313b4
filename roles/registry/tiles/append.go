package tiles

import (
	"context"
	"fmt"
	"math"

	"github.com/ronhq/ron/store/kv"
)

// Append adds leaves (artifact bytes; leaf index = version) after the
// stored checkpoint's size, extends the tiles, signs a checkpoint for the new
// size and stores tiles and checkpoint in one kv transaction (fsynced on a
// durable engine); only then is the checkpoint published and returned. If the
// new tree's root at the previous size differs from the previous
// checkpoint's root, nothing is written and the error wraps ErrSplitView. A
// leaf above MaxLeafSize wraps ErrLeafTooLarge and appends nothing. Without
// leaves Append returns the published checkpoint and writes nothing.
func (t *Tree) Append(ctx context.Context, leaves [][]byte) (Checkpoint, error) {
	if len(leaves) == 0 {
		return t.Checkpoint(), nil
	}
	hashes := make([][32]byte, len(leaves))
	for i, l := range leaves {
		if len(l) > MaxLeafSize {
			return Checkpoint{}, fmt.Errorf("%w: leaf %d is %d bytes, max %d", ErrLeafTooLarge, i, len(l), MaxLeafSize)
		}
		hashes[i] = leafHash(l)
	}
	var cp Checkpoint
	err := t.db.Update(ctx, func(tx kv.Tx) (err error) {
		cp, err = t.appendTx(tx, hashes)
		return err
	})
	if err != nil {
		return Checkpoint{}, fmt.Errorf("tiles: append: %w", err)
	}
	t.publish(cp)
	return cp, nil
}

// appendTx extends the tree by the leaf hashes inside tx and stores the new
// tiles and checkpoint.
func (t *Tree) appendTx(tx kv.Tx, hashes [][32]byte) (Checkpoint, error) {
	tb, cb, err := buckets(tx)
	if err != nil {
		return Checkpoint{}, err
	}
	prev, ok, err := storedCheckpoint(cb, t.Key())
	if err != nil {
		return Checkpoint{}, err
	}
	if !ok {
		return Checkpoint{}, fmt.Errorf("%w: no stored checkpoint", ErrCorrupt)
	}
	if prev.Size > math.MaxUint64-uint64(len(hashes)) {
		return Checkpoint{}, fmt.Errorf("tiles: tree size overflow")
	}
	w := &tileWriter{b: tb, size: prev.Size, dirty: map[tileID][]byte{}}
	for _, h := range hashes {
		if err := w.appendLeaf(h); err != nil {
			return Checkpoint{}, err
		}
	}
	if err := checkConsistent(w.source, prev); err != nil {
		return Checkpoint{}, err
	}
	root, err := rootAt(w.source, w.size)
	if err != nil {
		return Checkpoint{}, err
	}
	cp, err := signCheckpoint(t.Key(), w.size, root)
	if err != nil {
		return Checkpoint{}, err
	}
	if err := w.flush(); err != nil {
		return Checkpoint{}, err
	}
	if err := cb.Put(checkpointKey, cp.Note); err != nil {
		return Checkpoint{}, err
	}
	return cp, nil
}

// checkConsistent refuses a tree whose root at prev.Size is not prev.Root.
func checkConsistent(src tileSource, prev Checkpoint) error {
	old, err := rootAt(src, prev.Size)
	if err != nil {
		return err
	}
	if old != prev.Root {
		return fmt.Errorf("%w: size %d: tiles give root %x, checkpoint has %x", ErrSplitView, prev.Size, old, prev.Root)
	}
	return nil
}

// tileID names one tile.
type tileID struct {
	level uint8
	index uint64
}

// tileWriter appends hashes to the rightmost tile of each level within one
// transaction; modified tiles overlay the bucket until flush.
type tileWriter struct {
	b     kv.Bucket
	size  uint64 // leaves in the tree so far
	dirty map[tileID][]byte
}

// source reads tiles through the overlay.
func (w *tileWriter) source(level uint8, index uint64) []byte {
	if d, ok := w.dirty[tileID{level, index}]; ok {
		return d
	}
	return w.b.Get(tileKey(level, index))
}

// appendLeaf adds one leaf hash at level 0; each tile it completes adds
// the tile's subtree root to the level above.
func (w *tileWriter) appendLeaf(h [32]byte) error {
	index := w.size // index of the new hash within its level
	for level := uint8(0); ; level++ {
		tile, err := w.rightmost(level, index)
		if err != nil {
			return err
		}
		tile = append(tile, h[:]...)
		w.dirty[tileID{level, index / TileWidth}] = tile
		if index%TileWidth != TileWidth-1 {
			break
		}
		h, index = subtreeRoot(tile), index/TileWidth
	}
	w.size++
	return nil
}

// rightmost returns a growable copy of the tile that receives hash index of
// level; the stored tile must hold exactly the hashes before it.
func (w *tileWriter) rightmost(level uint8, index uint64) ([]byte, error) {
	id := tileID{level, index / TileWidth}
	if d, ok := w.dirty[id]; ok {
		return d, nil
	}
	stored := w.b.Get(tileKey(level, id.index))
	if want := index % TileWidth * HashSize; uint64(len(stored)) != want {
		return nil, fmt.Errorf("%w: tile %s holds %d bytes, want %d", ErrCorrupt,
			TilePath{Level: level, Index: id.index}, len(stored), want)
	}
	return append(make([]byte, 0, FullTileSize), stored...), nil
}

// flush stores every modified tile.
func (w *tileWriter) flush() error {
	for id, data := range w.dirty {
		if err := w.b.Put(tileKey(id.level, id.index), data); err != nil {
			return err
		}
	}
	return nil
}
