package tiles

import (
	"fmt"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

// hasher is RFC 6962 with SHA-256.
var hasher = rfc6962.DefaultHasher

// ranges builds compact ranges with the RFC 6962 node hash.
var ranges = &compact.RangeFactory{Hash: hasher.HashChildren}

// tileSource reads stored tiles: the current content of tile (level, index),
// or nil when none is stored. The slice is only valid until the enclosing
// transaction ends.
type tileSource func(level uint8, index uint64) []byte

// leafHash is the RFC 6962 leaf hash SHA-256(0x00‖leaf).
func leafHash(leaf []byte) [32]byte {
	return [32]byte(hasher.HashLeaf(leaf))
}

// subtreeRoot hashes 2^k consecutive aligned hashes (32 bytes each) of one
// level up to the root of their perfect subtree.
func subtreeRoot(data []byte) [32]byte {
	level := make([][]byte, len(data)/HashSize)
	for i := range level {
		level[i] = data[i*HashSize : (i+1)*HashSize]
	}
	for len(level) > 1 {
		next := level[:len(level)/2]
		for i := range next {
			next[i] = hasher.HashChildren(level[2*i], level[2*i+1])
		}
		level = next
	}
	return [32]byte(level[0])
}

// nodeHash returns the hash of a perfect subtree node: a stored hash when
// its height is a multiple of 8, otherwise the root over the 2^(h mod 8)
// stored hashes below it, which lie in one tile.
func nodeHash(src tileSource, id compact.NodeID) ([32]byte, error) {
	level, r := id.Level/TileHeight, id.Level%TileHeight
	if level > MaxLevel {
		return [32]byte{}, fmt.Errorf("%w: node level %d", ErrCorrupt, id.Level)
	}
	first := id.Index << r
	off, n := first%TileWidth, uint64(1)<<r
	data := src(uint8(level), first/TileWidth)
	if uint64(len(data)) < (off+n)*HashSize {
		return [32]byte{}, fmt.Errorf("%w: tile %d/%d holds %d bytes, need %d", ErrCorrupt,
			level, first/TileWidth, len(data), (off+n)*HashSize)
	}
	return subtreeRoot(data[off*HashSize : (off+n)*HashSize]), nil
}

// nodeHashes returns the hashes of ids, as byte slices.
func nodeHashes(src tileSource, ids []compact.NodeID) ([][]byte, error) {
	out := make([][]byte, len(ids))
	for i, id := range ids {
		h, err := nodeHash(src, id)
		if err != nil {
			return nil, err
		}
		out[i] = h[:]
	}
	return out, nil
}

// rootAt computes the root of the tree of the first size leaves from tiles.
func rootAt(src tileSource, size uint64) ([32]byte, error) {
	if size == 0 {
		return EmptyRoot, nil
	}
	hashes, err := nodeHashes(src, compact.RangeNodes(0, size, nil))
	if err != nil {
		return [32]byte{}, err
	}
	r, err := ranges.NewRange(0, size, hashes)
	if err != nil {
		return [32]byte{}, fmt.Errorf("tiles: root at %d: %w", size, err)
	}
	root, err := r.GetRootHash(nil)
	if err != nil {
		return [32]byte{}, fmt.Errorf("tiles: root at %d: %w", size, err)
	}
	return [32]byte(root), nil
}

// buildProof fetches the nodes a proof needs from tiles and folds the
// ephemeral node.
func buildProof(src tileSource, nodes proof.Nodes) ([][]byte, error) {
	hashes, err := nodeHashes(src, nodes.IDs)
	if err != nil {
		return nil, err
	}
	return nodes.Rehash(hashes, hasher.HashChildren)
}
