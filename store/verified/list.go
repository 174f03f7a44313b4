package verified

import (
	"strconv"

	"github.com/ronhq/ron/store"
)

// MaxListBytes bounds a chunk list document: 32 MiB hold the ~480,000 entries
// of a ~29 GiB object (an 8 GiB object's list is about 9 MiB). Longer
// documents are refused by ParseList; readers should stop reading past it.
const MaxListBytes = 32 << 20

// List is an object's chunk list (the body of GET /o/{b3}/chunks, storage's
// ChunkList): the object id, its size, the chunk size (always store.ChunkSize
// in v1) and the digest of every chunk in order. A List from ParseList is
// consistent: len(Chunks) == store.ChunkCount(Size).
type List struct {
	ID        store.ID
	Size      int64
	ChunkSize int
	Chunks    []store.ID
}

// ListOf returns the list of data: its id, size and chunk digests. It is
// what a storage node serves for data, and what tests build providers from.
func ListOf(data []byte) List {
	h := store.NewHasher()
	_, _ = h.Write(data)
	id, chunks, n := h.Sum()
	return List{ID: id, Size: n, ChunkSize: store.ChunkSize, Chunks: chunks}
}

// AppendJSON appends the list in storage's wire format,
// {"id":"b3:…","size":N,"chunk_size":65536,"chunks":["b3:…",…]}, to b.
func (l List) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, l.ID.String()...)
	b = append(b, `","size":`...)
	b = strconv.AppendInt(b, l.Size, 10)
	b = append(b, `,"chunk_size":`...)
	b = strconv.AppendInt(b, int64(l.ChunkSize), 10)
	b = append(b, `,"chunks":[`...)
	for i, c := range l.Chunks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, c.String()...)
		b = append(b, '"')
	}
	return append(b, "]}"...)
}

// Count returns the number of chunks.
func (l List) Count() int { return len(l.Chunks) }

// ChunkLen returns the length of chunk i (0 when i is out of range).
func (l List) ChunkLen(i int) int { return store.ChunkLen(l.Size, i) }

// ChunkRange returns the chunks covering bytes [start, end] (both
// inclusive). It requires 0 ≤ start ≤ end < Size and returns (0, -1), an
// empty range, otherwise.
func (l List) ChunkRange(start, end int64) (first, last int) {
	if start < 0 || start > end || end >= l.Size {
		return 0, -1
	}
	return int(start / store.ChunkSize), int(end / store.ChunkSize)
}

// Span returns the byte offset and length of chunks first..last (inclusive);
// (0, 0) for an empty or out-of-range span.
func (l List) Span(first, last int) (off, n int64) {
	if first < 0 || first > last || last >= l.Count() {
		return 0, 0
	}
	off = int64(first) * store.ChunkSize
	end := min(int64(last+1)*store.ChunkSize, l.Size)
	return off, end - off
}

// RangeHeader returns the Range request value that fetches chunks
// first..last: "bytes=a-b" with a = first·64 KiB and b the span's last byte
// (docs/storage.md §4). It returns "" for an empty or out-of-range span.
func (l List) RangeHeader(first, last int) string {
	off, n := l.Span(first, last)
	if n == 0 {
		return ""
	}
	return "bytes=" + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+n-1, 10)
}

// Covers reports whether chunks first..last are the whole object.
func (l List) Covers(first, last int) bool {
	return first == 0 && last == l.Count()-1
}

// check reports why l is not a consistent v1 list, or nil.
func (l List) check() error {
	switch {
	case l.Size < 0:
		return badListf("size %d < 0", l.Size)
	case l.ChunkSize != store.ChunkSize:
		return badListf("chunk_size %d, want %d", l.ChunkSize, store.ChunkSize)
	case l.Size > maxSize:
		return badListf("size %d too large", l.Size)
	case len(l.Chunks) != store.ChunkCount(l.Size):
		return badListf("%d chunks for size %d, want %d", len(l.Chunks), l.Size, store.ChunkCount(l.Size))
	}
	return nil
}

// maxSize is the largest size a list may claim: 2^53−1, the JSON-safe
// integer limit that every size field in ron's formats shares.
const maxSize = 1<<53 - 1
