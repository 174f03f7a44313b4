package edgecache

import (
	"io"
	"sort"
)

const (
	minChunk = 16 << 10
	maxChunk = 1 << 20
)

// chunkedData is a growing body in memory, kept as chunks so that growth
// never copies what was written. Bytes below the published length are
// immutable; readers take a snapshot (the chunk slice headers) under the
// owner's lock and copy outside it.
type chunkedData struct {
	chunks [][]byte // each with its full capacity as length
	starts []int64  // offset of each chunk
}

// room returns the writable tail at offset n (the current length),
// allocating a chunk when the last one is full. hint is the expected total
// length (−1 unknown).
func (d *chunkedData) room(n, hint int64) []byte {
	if k := len(d.chunks); k > 0 {
		last := d.chunks[k-1]
		if used := n - d.starts[k-1]; used < int64(len(last)) {
			return last[used:]
		}
	}
	size := int64(minChunk)
	if n > size {
		size = n
	}
	if hint > n {
		size = hint - n
	}
	size = min(max(size, minChunk), maxChunk)
	d.chunks = append(d.chunks, make([]byte, size))
	d.starts = append(d.starts, n)
	return d.chunks[len(d.chunks)-1]
}

// snapshot returns a read-only view of the first n bytes.
func (d *chunkedData) snapshot(n int64) *chunkedData {
	k := sort.Search(len(d.starts), func(i int) bool { return d.starts[i] >= n })
	return &chunkedData{chunks: d.chunks[:k:k], starts: d.starts[:k:k]}
}

// final returns the first n bytes as a compact view: the last chunk is
// copied into an exact-size slice when it wastes more than minChunk.
func (d *chunkedData) final(n int64) *chunkedData {
	s := d.snapshot(n)
	if k := len(s.chunks); k > 0 {
		used := n - s.starts[k-1]
		last := s.chunks[k-1]
		if int64(len(last))-used > minChunk {
			last = append([]byte(nil), last[:used]...)
		}
		s.chunks = append(s.chunks[:k-1:k-1], last[:used])
	}
	return s
}

// slices returns bytes [off, off+n) as sub-slices of the chunks (which
// must hold them).
func (d *chunkedData) slices(off, n int64) [][]byte {
	if off < 0 || n <= 0 {
		return nil
	}
	i := sort.Search(len(d.starts), func(i int) bool { return d.starts[i] > off }) - 1
	var out [][]byte
	for ; n > 0 && i >= 0 && i < len(d.chunks); i++ {
		c := d.chunks[i][off-d.starts[i]:]
		c = c[:min(int64(len(c)), n)]
		out = append(out, c)
		off, n = off+int64(len(c)), n-int64(len(c))
	}
	return out
}

// readAt copies bytes at off from the first size bytes into p.
func (d *chunkedData) readAt(p []byte, off, size int64) int {
	if off >= size {
		return 0
	}
	p = p[:min(int64(len(p)), size-off)]
	i := sort.Search(len(d.starts), func(i int) bool { return d.starts[i] > off }) - 1
	n := 0
	for n < len(p) && i < len(d.chunks) {
		c := d.chunks[i][off+int64(n)-d.starts[i]:]
		n += copy(p[n:], c)
		i++
	}
	return n
}

// memBlob is a stored body in memory.
type memBlob struct {
	d    *chunkedData
	size int64
}

func (b *memBlob) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errNegativeOffset
	}
	n := b.d.readAt(p, off, b.size)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Slices implements Slicer.
func (b *memBlob) Slices(off, n int64) [][]byte {
	return b.d.slices(off, min(n, b.size-off))
}

func (b *memBlob) Size() int64  { return b.size }
func (b *memBlob) Close() error { return nil }
