package tiles

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/transparency-dev/merkle/proof"

	"github.com/ronhq/ron/internal/fixtures"
)

// testTreeLeaves are the leaves of the RFC 6962 / CT test tree the merkle
// vectors are built over.
var testTreeLeaves = []string{"", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"}

// v0.0.2 of transparency-dev/merkle accepts these three size1 = 0 vectors
// that upstream HEAD (and our ConsistencyProof) reject; see testdata/SOURCES.md §5.
var consistencyVerifierCaveat = map[string]bool{
	"sizes-are-equal-zero-and-proof-is-empty.json": true,
	"size1-is-zero-and-size2-is-not-zero.json":     true,
	"size1-is-zero-and-does-not-equal-size2.json":  true,
}

type inclusionVector struct {
	LeafIdx  uint64   `json:"leafIdx"`
	TreeSize uint64   `json:"treeSize"`
	Root     []byte   `json:"root"`
	LeafHash []byte   `json:"leafHash"`
	Proof    [][]byte `json:"proof"`
	WantErr  bool     `json:"wantErr"`
}

type consistencyVector struct {
	Size1   uint64   `json:"size1"`
	Size2   uint64   `json:"size2"`
	Root1   []byte   `json:"root1"`
	Root2   []byte   `json:"root2"`
	Proof   [][]byte `json:"proof"`
	WantErr bool     `json:"wantErr"`
}

// vectorTree holds the test tree at every size 0–8: roots and tree.
type vectorTree struct {
	tr    *Tree
	roots [][32]byte
}

func newVectorTree(t *testing.T) vectorTree {
	tr, _ := newMemTree(t)
	vt := vectorTree{tr: tr, roots: [][32]byte{EmptyRoot}}
	for _, h := range testTreeLeaves {
		leaf, _ := hex.DecodeString(h)
		cp, err := tr.Append(t.Context(), [][]byte{leaf})
		if err != nil {
			t.Fatal(err)
		}
		vt.roots = append(vt.roots, cp.Root)
	}
	if hex.EncodeToString(vt.roots[8][:]) != "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328" {
		t.Fatalf("size-8 root %x", vt.roots[8])
	}
	return vt
}

// rootIs reports whether the tree of size leaves has root r.
func (vt vectorTree) rootIs(size uint64, r []byte) bool {
	return size < uint64(len(vt.roots)) && bytes.Equal(vt.roots[size][:], r)
}

func walkVectors(t *testing.T, kind string, fn func(name string, b []byte)) int {
	t.Helper()
	dir := fixtures.Path(t, "merkle", kind)
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		fn(path, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMerkleInclusionVectors: for every vector, our tree (roots, leaf
// hashes and proofs derived from tiles) reproduces the happy paths over the
// test tree and never reproduces a vector that must fail.
func TestMerkleInclusionVectors(t *testing.T) {
	vt := newVectorTree(t)
	happy := 0
	files := walkVectors(t, "inclusion", func(name string, b []byte) {
		var v inclusionVector
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := proof.VerifyInclusion(hasher, v.LeafIdx, v.TreeSize, v.LeafHash, v.Proof, v.Root); (err != nil) != v.WantErr {
			t.Errorf("%s: VerifyInclusion = %v, wantErr %v", name, err, v.WantErr)
		}
		ours := vt.matchesInclusion(v)
		switch {
		case v.WantErr && ours:
			t.Errorf("%s: our tree produces a tuple that must fail", name)
		case !v.WantErr && vt.rootIs(v.TreeSize, v.Root):
			if !ours {
				t.Errorf("%s: our tree does not reproduce the happy path", name)
			}
			happy++
		}
	})
	t.Logf("%d files, %d happy paths", files, happy)
	if files < 90 || happy < 5 {
		t.Fatalf("%d files, %d happy paths over the test tree", files, happy)
	}
}

func (vt vectorTree) matchesInclusion(v inclusionVector) bool {
	if !vt.rootIs(v.TreeSize, v.Root) || v.LeafIdx >= v.TreeSize {
		return false
	}
	lh, err := vt.tr.LeafHash(v.LeafIdx)
	if err != nil || !bytes.Equal(lh[:], v.LeafHash) {
		return false
	}
	p, err := vt.tr.InclusionProof(v.LeafIdx, v.TreeSize)
	return err == nil && slices.EqualFunc(p, v.Proof, bytes.Equal)
}

// TestMerkleConsistencyVectors: the same for consistency proofs.
func TestMerkleConsistencyVectors(t *testing.T) {
	vt := newVectorTree(t)
	happy := 0
	files := walkVectors(t, "consistency", func(name string, b []byte) {
		var v consistencyVector
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		err := proof.VerifyConsistency(hasher, v.Size1, v.Size2, v.Proof, v.Root1, v.Root2)
		if (err != nil) != v.WantErr && !consistencyVerifierCaveat[filepath.Base(name)] {
			t.Errorf("%s: VerifyConsistency = %v, wantErr %v", name, err, v.WantErr)
		}
		ours := vt.matchesConsistency(v)
		switch {
		case v.WantErr && ours:
			t.Errorf("%s: our tree produces a tuple that must fail", name)
		case !v.WantErr && vt.rootIs(v.Size1, v.Root1) && vt.rootIs(v.Size2, v.Root2):
			if !ours {
				t.Errorf("%s: our tree does not reproduce the happy path", name)
			}
			happy++
		}
	})
	t.Logf("%d files, %d happy paths", files, happy)
	if files < 90 || happy < 5 {
		t.Fatalf("%d files, %d happy paths over the test tree", files, happy)
	}
}

func (vt vectorTree) matchesConsistency(v consistencyVector) bool {
	if !vt.rootIs(v.Size1, v.Root1) || !vt.rootIs(v.Size2, v.Root2) {
		return false
	}
	p, err := vt.tr.ConsistencyProof(v.Size1, v.Size2)
	return err == nil && slices.EqualFunc(p, v.Proof, bytes.Equal)
}
