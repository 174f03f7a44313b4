// Package vfetchtest holds fakes for tests of verified reads (package
// vfetch and its users): objects as honest and dishonest sources serve them
// (Honest, Corrupt, SelfConsistent, V1, the table of Liars every reader's
// tests run, and sources lying about the size only: SizeLiar, SizeLiars),
// the byte ranges those tests read (Ranges, SizeRanges), and a response
// body paced by the clock, for testing/synctest bubbles.
package vfetchtest

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"time"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/bao"
	"github.com/ronhq/ron/store/verified"
)

// Object is what a source serves for one id: the body and the outboard
// (GET /o/{b3}/outboard). A nil Outboard is a source without that route — a
// ron from before verified streaming — which answers 404 there while
// HEAD /o/{b3} answers 200.
type Object struct {
	ID       store.ID
	Data     []byte
	Outboard []byte
}

// Honest serves data truthfully.
func Honest(data []byte) Object {
	t := verified.TreeOf(data)
	return Object{ID: t.ID, Data: data, Outboard: t.Outboard}
}

// Corrupt serves data's true outboard with the byte at off flipped in the
// body: the group holding it fails verification.
func Corrupt(data []byte, off int) Object {
	o := Honest(data)
	o.Data = flip(data, off)
	return o
}

// SelfConsistent serves a body with the byte at off flipped and the
// outboard of those bytes, under the true id: the fake tree does not hash
// up to the id, so no group verifies.
func SelfConsistent(data []byte, off int) Object {
	o := Corrupt(data, off)
	o.Outboard = verified.TreeOf(o.Data).Outboard
	return o
}

// V1 serves data truthfully from a ron before verified streaming: no
// outboard.
func V1(data []byte) Object {
	o := Honest(data)
	o.Outboard = nil
	return o
}

// flip returns a copy of b with the byte at off changed.
func flip(b []byte, off int) []byte {
	c := bytes.Clone(b)
	c[off] ^= 0xff
	return c
}

// Liar is one dishonest source of an object in a reader's test table.
type Liar struct {
	Name string
	Object
	// Bad is the first and last group (inclusive) that cannot verify
	// against the id with what the source serves; the groups outside are
	// the object's own and verify.
	Bad [2]int
}

// Liars returns the lying sources of data (at least three groups) that
// every reader's test table runs (docs/storage.md §4): fake bytes with a
// self-consistent fake outboard, an outboard of another object, a truncated
// outboard, a flipped byte in the outboard's root node, the true outboard
// with one flipped byte in the first, a middle and the last group, and a
// source whose answer changes between the outboard and the data request
// (another object's bytes from group 1 on).
func Liars(data []byte) []Liar {
	last := store.ChunkCount(int64(len(data))) - 1
	mid := last / 2
	if last < 2 {
		panic("vfetchtest: Liars needs an object of at least three groups")
	}
	all := [2]int{0, last}
	honest := Honest(data)
	other := bytes.Clone(data)
	for i := range other {
		other[i] ^= 0x5a
	}
	changed := honest
	changed.Data = append(bytes.Clone(data[:bao.GroupSize]), other[bao.GroupSize:]...)
	anotherOB := honest
	anotherOB.Outboard = verified.TreeOf(other).Outboard
	truncated := honest
	truncated.Outboard = honest.Outboard[:len(honest.Outboard)-1]
	badRoot := honest
	badRoot.Outboard = flip(honest.Outboard, 8)
	return []Liar{
		{"fake bytes with their own outboard", SelfConsistent(data, 10), all},
		{"the outboard of another object", anotherOB, all},
		{"a truncated outboard", truncated, all},
		{"a flipped byte in the outboard's root node", badRoot, all},
		{"a flipped byte in the first group", Corrupt(data, 100), [2]int{0, 0}},
		{"a flipped byte in a middle group", Corrupt(data, mid*bao.GroupSize+bao.GroupSize/2), [2]int{mid, mid}},
		{"a flipped byte in the last group", Corrupt(data, len(data)-1), [2]int{last, last}},
		{"the answer changes after the outboard", changed, [2]int{1, last}},
	}
}

// Delivers returns what a verifying reader of the bytes [start, end]
// (inclusive) of truth may pass on from l: the range's bytes before the
// first bad group it covers, and whether that is the whole range (the range
// covers no bad group).
func (l Liar) Delivers(truth []byte, start, end int64) (want []byte, complete bool) {
	first, last := int(start/bao.GroupSize), int(end/bao.GroupSize)
	if last < l.Bad[0] || first > l.Bad[1] {
		return truth[start : end+1], true
	}
	good := max(int64(l.Bad[0])*bao.GroupSize, start)
	return truth[start:good], false
}

// DeliversProven is Delivers for a reader that also proves the size (reads
// the object's last group) before it answers a range ending before the last
// group: such a range gets nothing when the last group is bad. It is for
// the liars of Liars, whose outboards state the true size.
func (l Liar) DeliversProven(truth []byte, start, end int64) (want []byte, complete bool) {
	last := store.ChunkCount(int64(len(truth))) - 1
	if end/bao.GroupSize < int64(last) && l.Bad[1] == last {
		return nil, false
	}
	return l.Delivers(truth, start, end)
}

// SizeLiar serves, under the id of data, an object of size bytes — a size
// data does not have — with as much of data's tree as that size's tree
// shares: its body is data cut or extended to size, its outboard states
// size and holds data's own parent node wherever the tree of size has a
// node at the same place (the same first group, the same left subtree),
// the parents of its body elsewhere. Every group whose path to the root is
// the same in both trees verifies against the id under the false size, so
// a range of them comes back proven; the last group of either size never
// does (its length or its place in the tree depends on the size). This is
// the most a source lying about the size alone can do: with the same
// group count (a few bytes more or less) every group but the last
// verifies; with another count, at least the root's left subtree when it
// is the same (as for 5–8 groups).
func SizeLiar(data []byte, size int64) Object {
	honest := Honest(data)
	body := make([]byte, size)
	for i := copy(body, data); i < len(body); i++ {
		body[i] = byte(i) ^ 0xa5
	}
	ob := verified.TreeOf(body).Outboard
	truth := map[[2]int]int{}
	for i, n := range parents(0, store.ChunkCount(int64(len(data))), nil) {
		truth[n] = i
	}
	for i, n := range parents(0, store.ChunkCount(size), nil) {
		if j, ok := truth[n]; ok {
			copy(ob[nodeAt(i):nodeAt(i+1)], honest.Outboard[nodeAt(j):nodeAt(j+1)])
		}
	}
	return Object{ID: honest.ID, Data: body, Outboard: ob}
}

// parents appends the parent nodes of the subtree of count groups from
// group first in pre-order (the outboard's order), each as its first group
// and the groups of its left subtree (the largest power of two below
// count): the node's place in any tree.
func parents(first, count int, out [][2]int) [][2]int {
	if count < 2 {
		return out
	}
	left := 1
	for left*2 < count {
		left *= 2
	}
	out = append(out, [2]int{first, left})
	out = parents(first, left, out)
	return parents(first+left, count-left, out)
}

// nodeAt is the offset of parent node i in an outboard.
func nodeAt(i int) int { return 8 + 64*i }

// SizeLiars returns sources of data (5–7 groups and a partial one: the
// root's left subtree is four groups for data and for every lie) that lie
// about its size only (SizeLiar): by a few bytes and by a whole group, more
// and less. Bad is the groups, counted in data, that do not verify under
// the stated size: from the first group off the shared paths to data's
// last.
func SizeLiars(data []byte) []Liar {
	size := int64(len(data))
	if n := store.ChunkCount(size); n < 6 || n > 7 || size%bao.GroupSize < 8 {
		panic("vfetchtest: SizeLiars needs 5–7 groups and a partial one of at least 8 bytes")
	}
	var out []Liar
	for _, lie := range []struct {
		name  string
		delta int64
	}{
		{"a size a few bytes larger", 5}, {"a size a few bytes smaller", -5},
		{"a size one group larger", bao.GroupSize}, {"a size one group smaller", -bao.GroupSize},
	} {
		o := SizeLiar(data, size+lie.delta)
		out = append(out, Liar{Name: lie.name, Object: o, Bad: [2]int{firstBad(o), store.ChunkCount(size) - 1}})
	}
	return out
}

// firstBad is the first group of o's body that does not verify against
// o.ID under the size its outboard states.
func firstBad(o Object) int {
	ob, size := bao.Outboard(o.Outboard), int64(len(o.Data))
	for g := range int64(store.ChunkCount(size)) {
		end := min((g+1)*bao.GroupSize, size)
		if bao.VerifyGroup(o.Data[g*bao.GroupSize:end], ob, o.ID, g) != nil {
			return int(g)
		}
	}
	panic("vfetchtest: every group verifies: not a liar")
}

// Range is a byte range [Start, End], both inclusive, as a Range header
// states it.
type Range struct{ Start, End int64 }

// Header is the Range header value of r.
func (r Range) Header() string {
	return "bytes=" + strconv.FormatInt(r.Start, 10) + "-" + strconv.FormatInt(r.End, 10)
}

// Ranges returns ranges of an object of size bytes (at least 3·64 KiB)
// that start and end on and off group boundaries: inside the first group,
// exactly one group, across a boundary, a middle group's inside, the last
// byte, and the tail from a boundary.
func Ranges(size int64) []Range {
	const g = bao.GroupSize
	return []Range{
		{0, 0}, {0, g - 1}, {g, 2*g - 1}, {g - 1, g}, {1, 3*g - 2},
		{2*g + 17, 2*g + 99}, {size - 1, size - 1}, {2 * g, size - 1}, {100, size - 2},
	}
}

// SizeRanges returns Ranges(size) and two tails: the last three bytes
// (which the smaller lies of SizeLiars cannot satisfy) and one from size
// on (which nobody can).
func SizeRanges(size int64) []Range {
	return append(Ranges(size), Range{size - 3, size - 1}, Range{size, size + 10})
}

// StatesClaim reports whether an answer to r about an object whose
// outboard states claim.Size states that total before reading the stated
// last group — a 416 (r starts at or past the size) or a 206 ending before
// that group — so that a reader must prove the size first.
func (r Range) StatesClaim(claim verified.Tree) bool {
	return r.Start >= claim.Size || !claim.ReachesLast(min(r.End, claim.Size-1))
}

// Paced is a response body that yields Data group by group (64 KiB),
// waiting Pause before each group (none when 0), and stalls after
// StallAfter bytes until Ctx ends (the request's context: a cancelled
// request unblocks it). Under testing/synctest the waits take fake time.
type Paced struct {
	Ctx        context.Context
	Data       []byte
	Pause      time.Duration
	StallAfter int
	off        int
}

// Read implements io.Reader; at most one group's remainder per call.
func (b *Paced) Read(p []byte) (int, error) {
	if b.off == len(b.Data) {
		return 0, io.EOF
	}
	if b.off >= b.StallAfter {
		<-b.Ctx.Done()
		return 0, b.Ctx.Err()
	}
	if b.off%store.ChunkSize == 0 && b.Pause > 0 {
		select {
		case <-time.After(b.Pause):
		case <-b.Ctx.Done():
			return 0, b.Ctx.Err()
		}
	}
	end := min(len(b.Data), b.StallAfter, (b.off/store.ChunkSize+1)*store.ChunkSize, b.off+len(p))
	n := copy(p, b.Data[b.off:end])
	b.off += n
	return n, nil
}

// Close implements io.Closer; it does nothing.
func (b *Paced) Close() error { return nil }
