package verify

import (
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// Tile geometry of the registry's log (C2SP tlog-tiles, height 8).
const (
	tileHeight = 8
	tileWidth  = 1 << tileHeight
	maxLeaf    = 1<<16 - 1 // largest leaf an entry bundle can carry
)

// levels holds, for every tile level L, the level-L hashes of a tree of
// size leaves: entry i is the root of leaves [i·256^L, (i+1)·256^L). An
// entry is known once recomputed from the level below (level 0: from the
// leaf) or, for the pruned prefix the verifier has no leaves for, taken
// from a served tile; every served tile is compared with what is known.
type levels struct {
	size   uint64
	hashes [][]tlog.Hash
	known  [][]bool
}

// newLevels allocates the levels of a tree of size leaves.
func newLevels(size uint64) *levels {
	l := &levels{size: size}
	for n := size; n > 0; n >>= tileHeight {
		l.hashes = append(l.hashes, make([]tlog.Hash, n))
		l.known = append(l.known, make([]bool, n))
	}
	return l
}

// setLeaf records the leaf hash of version v.
func (l *levels) setLeaf(v uint64, h tlog.Hash) {
	l.hashes[0][v], l.known[0][v] = h, true
}

// compareTile checks the w hashes of served tile (level, n) against the
// known entries and adopts the unknown ones.
func (l *levels) compareTile(level int, n uint64, data []byte) *Mismatch {
	first := n * tileWidth
	for j := range uint64(len(data) / tlog.HashSize) {
		var h tlog.Hash
		copy(h[:], data[j*tlog.HashSize:])
		i := first + j
		switch {
		case !l.known[level][i]:
			l.hashes[level][i], l.known[level][i] = h, true
		case l.hashes[level][i] != h:
			if level == 0 {
				return atVersion(i, CheckLeaf, "leaf hash %s ≠ level-0 tile %d hash %s", l.hashes[0][i], n, h)
			}
			return atVersion(i<<(tileHeight*level), CheckTile,
				"level-%d tile %d hash %d is %s, the level below gives %s", level, n, j, h, l.hashes[level][i])
		}
	}
	return nil
}

// lift computes the level+1 entries whose 256 children at level are all
// known. It runs bottom-up, after every tile of level was compared, so no
// level+1 entry is known before it.
func (l *levels) lift(level int) {
	if level+1 >= len(l.hashes) {
		return
	}
	for g := range uint64(len(l.hashes[level+1])) {
		lo, hi := g*tileWidth, (g+1)*tileWidth
		if allTrue(l.known[level][lo:hi]) {
			l.hashes[level+1][g], l.known[level+1][g] = subtreeHash(l.hashes[level][lo:hi]), true
		}
	}
}

// subtreeHash is the RFC 6962 root of a complete subtree whose leaves'
// hashes (a power of two of them) are hs.
func subtreeHash(hs []tlog.Hash) tlog.Hash {
	if len(hs) == 1 {
		return hs[0]
	}
	half := len(hs) / 2
	return tlog.NodeHash(subtreeHash(hs[:half]), subtreeHash(hs[half:]))
}

// readHashes implements tlog.HashReader over the levels: stored hash
// (binary level b, index n) is the root of level-⌊b/8⌋ entries
// [n·2^(b mod 8), (n+1)·2^(b mod 8)). Unknown entries are an error.
func (l *levels) readHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for k, idx := range indexes {
		b, n := tlog.SplitStoredHashIndex(idx)
		level, span := b/tileHeight, uint64(1)<<(b%tileHeight)
		if level >= len(l.hashes) || (uint64(n)+1)*span > uint64(len(l.hashes[level])) {
			return nil, fmt.Errorf("hash (level %d, %d) outside the tree of size %d", b, n, l.size)
		}
		lo, hi := uint64(n)*span, (uint64(n)+1)*span
		if !allTrue(l.known[level][lo:hi]) {
			return nil, fmt.Errorf("hash (level %d, %d) lies in the pruned prefix and no served tile holds it", b, n)
		}
		out[k] = subtreeHash(l.hashes[level][lo:hi])
	}
	return out, nil
}

// root recomputes the tree root from the levels.
func (l *levels) root() (tlog.Hash, error) {
	return tlog.TreeHash(int64(l.size), tlog.HashReaderFunc(l.readHashes))
}

// allTrue reports whether every b is true.
func allTrue(bs []bool) bool {
	for _, b := range bs {
		if !b {
			return false
		}
	}
	return true
}
