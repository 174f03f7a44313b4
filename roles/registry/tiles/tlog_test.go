package tiles

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/transparency-dev/merkle/proof"
	"golang.org/x/mod/sumdb/tlog"
)

// checkAgainstTlog checks the tree against x/mod's independent tlog code:
// the root over tiles served by Tree.Tile, record proofs at cur and a tree
// proof from prev to cur; our own proofs must equal x/mod's.
func checkAgainstTlog(t *testing.T, tr *Tree, prev, cur Checkpoint, records int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(cur.Size, prev.Size))
	r := hashReader(tr, cur)
	n := int64(cur.Size)
	if th, err := tlog.TreeHash(n, r); err != nil || th != tlog.Hash(cur.Root) {
		t.Fatalf("size %d: tlog.TreeHash = %v, %v; checkpoint %x", n, th, err, cur.Root)
	}
	for range records {
		i := rng.Uint64N(cur.Size)
		p, err := tlog.ProveRecord(n, int64(i), r)
		if err != nil {
			t.Fatalf("ProveRecord(%d, %d): %v", n, i, err)
		}
		if err := tlog.CheckRecord(p, n, tlog.Hash(cur.Root), int64(i), tlog.RecordHash(testLeaf(i))); err != nil {
			t.Fatalf("CheckRecord(%d, %d): %v", i, n, err)
		}
		mine, err := tr.InclusionProof(i, cur.Size)
		if err != nil || !sameProof(mine, p) {
			t.Fatalf("InclusionProof(%d, %d) differs from tlog's (%v)", i, n, err)
		}
	}
	if prev.Size == 0 {
		return
	}
	if th, err := tlog.TreeHash(int64(prev.Size), r); err != nil || th != tlog.Hash(prev.Root) {
		t.Fatalf("tlog.TreeHash(%d) over the newer tiles = %v, %v", prev.Size, th, err)
	}
	p, err := tlog.ProveTree(n, int64(prev.Size), r)
	if err != nil {
		t.Fatalf("ProveTree(%d, %d): %v", n, prev.Size, err)
	}
	if err := tlog.CheckTree(p, n, tlog.Hash(cur.Root), int64(prev.Size), tlog.Hash(prev.Root)); err != nil {
		t.Fatalf("CheckTree(%d, %d): %v", n, prev.Size, err)
	}
	mine, err := tr.ConsistencyProof(prev.Size, cur.Size)
	if err != nil || !sameProof(mine, p) {
		t.Fatalf("ConsistencyProof(%d, %d) differs from tlog's (%v)", prev.Size, n, err)
	}
	if err := proof.VerifyConsistency(hasher, prev.Size, cur.Size, mine, prev.Root[:], cur.Root[:]); err != nil {
		t.Fatalf("VerifyConsistency(%d, %d): %v", prev.Size, n, err)
	}
}

func sameProof[H ~[32]byte](mine [][]byte, theirs []H) bool {
	return slices.EqualFunc(mine, theirs, func(a []byte, b H) bool { return bytes.Equal(a, b[:]) })
}

// TestAgainstXModTlog grows one tree through tile boundaries and random
// sizes up to ~70,000 leaves, in batches of every shape.
func TestAgainstXModTlog(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	sizes := []uint64{1, 2, 3, 7, 8, 9, 255, 256, 257, 511, 512, 513, 65535, 65536, 65537, 65791, 65792, 70000}
	for range 12 {
		sizes = append(sizes, 1+rng.Uint64N(70000))
	}
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	tr, _ := newMemTree(t)
	var prev Checkpoint
	for _, s := range sizes {
		cur := growTo(t, tr, s)
		checkAgainstTlog(t, tr, prev, cur, 3)
		prev = cur
	}
}
