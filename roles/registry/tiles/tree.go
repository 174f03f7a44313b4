package tiles

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/transparency-dev/merkle/proof"

	"github.com/ronhq/ron/store/kv"
)

// Tree is the registry's Merkle tree over a kv.DB. Append is meant for one
// writer (the checkpointer) but is safe to call concurrently: each call is
// one kv transaction and the published checkpoint only moves forward. Reads
// are safe for concurrent use; they see the published checkpoint, which is
// never ahead of the durable tiles.
type Tree struct {
	db  kv.DB
	key atomic.Pointer[LogKey] // replaced only by Rekey, while the tree is empty
	cp  atomic.Pointer[Checkpoint]
}

// OpenTree opens the tree kept in kdb, creating its buckets. A store without
// a checkpoint gets a signed checkpoint of the empty tree (size 0, root
// SHA-256("")). A stored checkpoint must verify with key and name its origin;
// otherwise the error wraps ErrBadCheckpoint. kdb stays owned by the caller,
// who closes it after the last use of the Tree.
func OpenTree(ctx context.Context, kdb kv.DB, key *LogKey) (*Tree, error) {
	if kdb == nil || key == nil {
		return nil, fmt.Errorf("tiles: OpenTree needs a kv.DB and a key")
	}
	var cp Checkpoint
	err := kdb.Update(ctx, func(tx kv.Tx) error {
		if _, err := tx.CreateBucket(bucketTiles); err != nil {
			return err
		}
		b, err := tx.CreateBucket(bucketCheckpoint)
		if err != nil {
			return err
		}
		var ok bool
		if cp, ok, err = storedCheckpoint(b, key); err != nil || ok {
			return err
		}
		if cp, err = signCheckpoint(key, 0, EmptyRoot); err != nil {
			return err
		}
		return b.Put(checkpointKey, cp.Note)
	})
	if err != nil {
		return nil, fmt.Errorf("tiles: open tree: %w", err)
	}
	t := &Tree{db: kdb}
	t.key.Store(key)
	t.cp.Store(&cp)
	return t, nil
}

// Key returns the log key the tree signs with.
func (t *Tree) Key() *LogKey { return t.key.Load() }

// ErrNotEmpty is Rekey's error on a tree that covers leaves.
var ErrNotEmpty = errors.New("tiles: the tree covers leaves: its key is fixed")

// Rekey makes key the tree's log key while the tree is empty (size 0): it
// stores and publishes the empty tree's checkpoint signed with key. A
// replicated registry that joins a log takes the log's key this way
// (docs/cluster.md §14). It must not run concurrently with Append.
func (t *Tree) Rekey(ctx context.Context, key *LogKey) error {
	if t.Size() != 0 {
		return ErrNotEmpty
	}
	cp, err := signCheckpoint(key, 0, EmptyRoot)
	if err != nil {
		return err
	}
	err = t.db.Update(ctx, func(tx kv.Tx) error {
		b, err := tx.CreateBucket(bucketCheckpoint)
		if err != nil {
			return err
		}
		return b.Put(checkpointKey, cp.Note)
	})
	if err != nil {
		return fmt.Errorf("tiles: rekey: %w", err)
	}
	t.key.Store(key)
	t.cp.Store(&cp)
	return nil
}

// Size returns the number of leaves covered by the published checkpoint.
func (t *Tree) Size() uint64 { return t.cp.Load().Size }

// Checkpoint returns the published checkpoint (its Note must not be
// modified).
func (t *Tree) Checkpoint() Checkpoint { return *t.cp.Load() }

// publish makes cp the published checkpoint unless a larger one already is.
func (t *Tree) publish(cp Checkpoint) {
	for {
		old := t.cp.Load()
		if old.Size >= cp.Size || t.cp.CompareAndSwap(old, &cp) {
			return
		}
	}
}

// view runs fn over the stored tiles in a read-only snapshot. Reads take no
// lock a writer holds across I/O, so they need no deadline.
func (t *Tree) view(fn func(src tileSource) error) error {
	return t.db.View(context.Background(), func(tx kv.Tx) error {
		b := tx.Bucket(bucketTiles)
		if b == nil {
			return fmt.Errorf("%w: buckets missing", ErrCorrupt)
		}
		return fn(bucketSource(b))
	})
}

// Tile returns a copy of hash tile (level, n): the full tile (8,192 bytes)
// when width is 0, else its first width hashes (width 1–255). It serves only
// what the published checkpoint covers (TilePath.Covered), else ErrNotFound;
// a level above 63 or a width outside 0–255 wraps ErrBadPath. A partial
// tile is cut from the stored tile, whose prefix never changes.
func (t *Tree) Tile(level uint8, n uint64, width int) ([]byte, error) {
	p := TilePath{Level: level, Index: n, Width: width}
	if !p.Valid() {
		return nil, fmt.Errorf("%w: tile %d/%d width %d", ErrBadPath, level, n, width)
	}
	if !p.Covered(t.Size()) {
		return nil, fmt.Errorf("%w: tile %s", ErrNotFound, p)
	}
	want := int(p.width()) * HashSize
	var out []byte
	err := t.view(func(src tileSource) error {
		data := src(level, n)
		if len(data) < want {
			return fmt.Errorf("%w: tile %s holds %d bytes, need %d", ErrCorrupt, p, len(data), want)
		}
		out = bytes.Clone(data[:want])
		return nil
	})
	return out, err
}

// RootAt returns the root of the tree of the first size leaves, computed
// from the stored tiles; size beyond the published checkpoint is
// ErrNotFound. The deep verifier compares it with checkpoints.
func (t *Tree) RootAt(size uint64) ([32]byte, error) {
	if size > t.Size() {
		return [32]byte{}, fmt.Errorf("%w: size %d > %d", ErrNotFound, size, t.Size())
	}
	var root [32]byte
	err := t.view(func(src tileSource) (err error) {
		root, err = rootAt(src, size)
		return err
	})
	return root, err
}

// LeafHash returns the stored level-0 hash of leaf index; an index at or
// beyond the published size is ErrNotFound.
func (t *Tree) LeafHash(index uint64) ([32]byte, error) {
	if index >= t.Size() {
		return [32]byte{}, fmt.Errorf("%w: leaf %d, size %d", ErrNotFound, index, t.Size())
	}
	var h [32]byte
	err := t.view(func(src tileSource) error {
		data := src(0, index/TileWidth)
		off := index % TileWidth * HashSize
		if uint64(len(data)) < off+HashSize {
			return fmt.Errorf("%w: leaf %d missing from its tile", ErrCorrupt, index)
		}
		copy(h[:], data[off:])
		return nil
	})
	return h, err
}

// InclusionProof returns the RFC 6962 inclusion proof of leaf index in the
// tree of size leaves, built from stored tiles. index ≥ size is ErrBadRange;
// size beyond the published checkpoint is ErrNotFound.
func (t *Tree) InclusionProof(index, size uint64) ([][]byte, error) {
	if index >= size {
		return nil, fmt.Errorf("%w: index %d, size %d", ErrBadRange, index, size)
	}
	nodes, err := proof.Inclusion(index, size)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRange, err)
	}
	return t.proof(size, nodes)
}

// ConsistencyProof returns the RFC 6962 consistency proof between the trees
// of size1 and size2 leaves, built from stored tiles; equal sizes give an
// empty proof. size1 = 0 or size1 > size2 is ErrBadRange (a proof from the
// empty tree proves nothing); size2 beyond the published checkpoint is
// ErrNotFound.
func (t *Tree) ConsistencyProof(size1, size2 uint64) ([][]byte, error) {
	if size1 == 0 || size1 > size2 {
		return nil, fmt.Errorf("%w: sizes %d, %d", ErrBadRange, size1, size2)
	}
	nodes, err := proof.Consistency(size1, size2)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRange, err)
	}
	return t.proof(size2, nodes)
}

func (t *Tree) proof(size uint64, nodes proof.Nodes) ([][]byte, error) {
	if size > t.Size() {
		return nil, fmt.Errorf("%w: size %d > %d", ErrNotFound, size, t.Size())
	}
	var out [][]byte
	err := t.view(func(src tileSource) (err error) {
		out, err = buildProof(src, nodes)
		return err
	})
	return out, err
}

// VerifyCheckpoint re-checks the published checkpoint: its signature with
// the log key (ErrBadCheckpoint) and its root against the stored tiles
// (ErrSplitView on a mismatch, ErrCorrupt when tiles are missing). Startup
// and the deep verifier run it; it does not check level-0 hashes against
// leaves, which needs the leaves.
func (t *Tree) VerifyCheckpoint() error {
	cp := t.Checkpoint()
	parsed, err := ParseCheckpoint(cp.Note, t.Key().Verifier())
	if err != nil {
		return err
	}
	if parsed.Size != cp.Size || parsed.Root != cp.Root {
		return fmt.Errorf("%w: note says size %d, published %d", ErrBadCheckpoint, parsed.Size, cp.Size)
	}
	return t.view(func(src tileSource) error { return checkConsistent(src, cp) })
}
