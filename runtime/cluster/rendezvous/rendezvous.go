// Package rendezvous ranks cluster members for a key by highest-random-weight
// hashing with zone spread (docs/cluster.md §3). It is pure: the same
// candidates and key give the same answer on every node.
package rendezvous

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/zeebo/blake3"
)

// Candidate is one member that may be chosen: its node id and zone ("" when
// it has none; all such nodes share that zone).
type Candidate struct {
	ID   string
	Zone string
}

// Score is the big-endian uint64 of the first 8 bytes of
// BLAKE3-256(nodeID ‖ 0x00 ‖ key). key is the raw 32-byte object digest or
// NameKey(name).
func Score(nodeID string, key []byte) uint64 {
	h := blake3.New()
	_, _ = h.WriteString(nodeID)
	_, _ = h.Write([]byte{0})
	_, _ = h.Write(key)
	var sum [32]byte
	h.Sum(sum[:0])
	return binary.BigEndian.Uint64(sum[:8])
}

// NameKey is the placement key of a name: BLAKE3-256("name:" + name).
func NameKey(name string) []byte {
	sum := blake3.Sum256([]byte("name:" + name))
	return sum[:]
}

// Rank returns cands ordered by Score for key, highest first; equal scores
// fall back to node id order. cands is not modified.
func Rank(cands []Candidate, key []byte) []Candidate {
	type scored struct {
		c Candidate
		s uint64
	}
	all := make([]scored, len(cands))
	for i, c := range cands {
		all[i] = scored{c, Score(c.ID, key)}
	}
	slices.SortFunc(all, func(a, b scored) int {
		if a.s != b.s {
			return cmp.Compare(b.s, a.s)
		}
		return cmp.Compare(a.c.ID, b.c.ID)
	})
	out := make([]Candidate, len(all))
	for i, s := range all {
		out[i] = s.c
	}
	return out
}

// Top is top(n, cands, key) of docs/cluster.md §3: walking Rank's order it
// takes at most one candidate per zone until n are chosen or the zones run
// out, then fills the remaining slots in score order. The result is in
// choice order (zone-spread picks first) and has min(n, len(cands)) members.
func Top(n int, cands []Candidate, key []byte) []Candidate {
	ranked := Rank(cands, key)
	if n >= len(ranked) {
		n = len(ranked)
	}
	out := make([]Candidate, 0, n)
	taken := make([]bool, len(ranked))
	zones := make(map[string]bool)
	for i, c := range ranked {
		if len(out) == n {
			break
		}
		if !zones[c.Zone] {
			zones[c.Zone] = true
			taken[i] = true
			out = append(out, c)
		}
	}
	for i, c := range ranked {
		if len(out) == n {
			break
		}
		if !taken[i] {
			out = append(out, c)
		}
	}
	return out
}

// IDs returns the node ids of cs in order.
func IDs(cs []Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}
