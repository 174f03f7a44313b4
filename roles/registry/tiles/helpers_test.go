package tiles

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/ronhq/ron/store/kv"
	"github.com/ronhq/ron/store/kv/bolt"
	"github.com/ronhq/ron/store/kv/memkv"
)

// testLeaf is the deterministic leaf of index i.
func testLeaf(i uint64) []byte { return fmt.Appendf(nil, "leaf %d", i) }

// testLeaves returns leaves [from, to).
func testLeaves(from, to uint64) [][]byte {
	out := make([][]byte, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, testLeaf(i))
	}
	return out
}

// newMemTree opens a tree over a fresh memkv with a fresh key.
func newMemTree(t *testing.T) (*Tree, kv.DB) {
	t.Helper()
	db := memkv.New()
	t.Cleanup(func() { db.Close() })
	key, err := NewLogKey("")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := OpenTree(t.Context(), db, key)
	if err != nil {
		t.Fatal(err)
	}
	return tr, db
}

// openBolt opens (or reopens) the bolt file in dir without fsync.
func openBolt(t *testing.T, dir string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, "tlog.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// growTo appends leaves until the tree has size leaves.
func growTo(t *testing.T, tr *Tree, size uint64) Checkpoint {
	t.Helper()
	cp, err := tr.Append(t.Context(), testLeaves(tr.Size(), size))
	if err != nil {
		t.Fatalf("grow to %d: %v", size, err)
	}
	if cp.Size != size || tr.Size() != size {
		t.Fatalf("size %d (published %d), want %d", cp.Size, tr.Size(), size)
	}
	return cp
}

// tileReader serves x/mod tlog tiles (H = 8) from Tree.Tile.
type tileReader struct{ tr *Tree }

func (r tileReader) Height() int { return TileHeight }

func (r tileReader) ReadTiles(ts []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(ts))
	for i, tl := range ts {
		if tl.H != TileHeight || tl.L < 0 {
			return nil, fmt.Errorf("unexpected tile %v", tl)
		}
		w := tl.W
		if w == TileWidth {
			w = 0
		}
		b, err := r.tr.Tile(uint8(tl.L), uint64(tl.N), w)
		if err != nil {
			return nil, fmt.Errorf("tile %s: %w", tl.Path(), err)
		}
		out[i] = b
	}
	return out, nil
}

func (r tileReader) SaveTiles([]tlog.Tile, [][]byte) {}

// hashReader returns an x/mod HashReader over the tree's tiles,
// authenticated against cp.
func hashReader(tr *Tree, cp Checkpoint) tlog.HashReader {
	return tlog.TileHashReader(tlog.Tree{N: int64(cp.Size), Hash: tlog.Hash(cp.Root)}, tileReader{tr})
}

// tamperTile flips one byte of a stored tile.
func tamperTile(t *testing.T, db kv.DB, level uint8, index uint64, at int) {
	t.Helper()
	err := db.Update(context.Background(), func(tx kv.Tx) error {
		b := tx.Bucket(bucketTiles)
		v := append([]byte(nil), b.Get(tileKey(level, index))...)
		if len(v) <= at {
			return fmt.Errorf("tile %d/%d has %d bytes", level, index, len(v))
		}
		v[at] ^= 0x01
		return b.Put(tileKey(level, index), v)
	})
	if err != nil {
		t.Fatal(err)
	}
}
