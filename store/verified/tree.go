package verified

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/bao"
)

// MaxOutboardBytes bounds an outboard: 64 MiB, the outboard of a 64 GiB
// object (storage's default max_object_bytes, 8 GiB, has an 8 MiB one).
// ParseTree refuses longer ones; readers stop reading past it.
const MaxOutboardBytes = 64 << 20

// Outboard layout (docs/storage.md §4): the 8-byte little-endian size, then
// one 64-byte parent node per group beyond the first.
const (
	headerBytes = 8
	parentBytes = 64
)

// MaxSize is the largest object whose outboard fits in MaxOutboardBytes.
const MaxSize = ((MaxOutboardBytes-headerBytes)/parentBytes + 1) * bao.GroupSize

// emptyID is the id of the empty object, the only one of size 0.
var emptyID = store.Sum(nil)

// Tree is what a reader needs to verify an object's bytes: its id, its size
// and its outboard. A Tree from ParseTree or TreeOf has a consistent shape;
// its bytes are proven group by group as they verify (see the package doc
// for when Size is).
type Tree struct {
	ID       store.ID
	Size     int64
	Outboard bao.Outboard
}

// ParseTree checks outboard, a source's answer to GET /o/{b3}/outboard, as
// the outboard of object id: at most MaxOutboardBytes, a header stating a
// size of at most MaxSize, and exactly bao.OutboardSize(size) bytes. It
// copies nothing: the Tree's Outboard aliases outboard. Shape failures wrap
// ErrBadOutboard. A size of 0 is a claim proven at once (the empty object
// has no group to verify): for any id but the empty object's it is a
// *MismatchError.
func ParseTree(outboard []byte, id store.ID) (Tree, error) {
	switch {
	case len(outboard) > MaxOutboardBytes:
		return Tree{}, fmt.Errorf("%w: %d bytes exceed %d", ErrBadOutboard, len(outboard), MaxOutboardBytes)
	case len(outboard) < headerBytes:
		return Tree{}, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrBadOutboard, len(outboard), headerBytes)
	}
	size := binary.LittleEndian.Uint64(outboard)
	if size > MaxSize {
		return Tree{}, fmt.Errorf("%w: states %d bytes, more than %d", ErrBadOutboard, size, int64(MaxSize))
	}
	t := Tree{ID: id, Size: int64(size), Outboard: outboard}
	return t, t.check()
}

// TreeOf returns the tree of data: its id, size and outboard. It is what a
// storage node serves for data, and what tests build sources from.
func TreeOf(data []byte) Tree {
	ob, id, err := bao.Encode(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		panic(err) // a bytes.Reader of the stated size does not fail
	}
	return Tree{ID: id, Size: int64(len(data)), Outboard: ob}
}

// check reports why t is not a consistent tree, or nil.
func (t Tree) check() error {
	if t.Size < 0 || t.Size > MaxSize {
		return fmt.Errorf("%w: size %d outside 0…%d", ErrBadOutboard, t.Size, int64(MaxSize))
	}
	if _, err := bao.ParseOutboard(t.Outboard, t.Size); err != nil {
		return err
	}
	if t.Size == 0 && t.ID != emptyID {
		return &MismatchError{Group: 0}
	}
	return nil
}

// Count returns the number of 64 KiB groups (0 for the empty object).
func (t Tree) Count() int { return store.ChunkCount(t.Size) }

// GroupLen returns the length of group i (0 when i is out of range).
func (t Tree) GroupLen(i int) int { return store.ChunkLen(t.Size, i) }

// GroupRange returns the groups covering bytes [start, end] (both
// inclusive). It requires 0 ≤ start ≤ end < Size and returns (0, -1), an
// empty range, otherwise.
func (t Tree) GroupRange(start, end int64) (first, last int) {
	if start < 0 || start > end || end >= t.Size {
		return 0, -1
	}
	return int(start / bao.GroupSize), int(end / bao.GroupSize)
}

// Span returns the byte offset and length of groups first..last
// (inclusive); (0, 0) for an empty or out-of-range span.
func (t Tree) Span(first, last int) (off, n int64) {
	if first < 0 || first > last || last >= t.Count() {
		return 0, 0
	}
	off = int64(first) * bao.GroupSize
	end := min(int64(last+1)*bao.GroupSize, t.Size)
	return off, end - off
}

// RangeHeader returns the Range request value that fetches groups
// first..last: "bytes=a-b" with a = first·64 KiB and b the span's last byte
// (docs/storage.md §4). It returns "" for an empty or out-of-range span.
func (t Tree) RangeHeader(first, last int) string {
	off, n := t.Span(first, last)
	if n == 0 {
		return ""
	}
	return "bytes=" + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+n-1, 10)
}

// Covers reports whether groups first..last are the whole object.
func (t Tree) Covers(first, last int) bool {
	return first == 0 && last == t.Count()-1
}
