package store

import (
	"github.com/zeebo/blake3"
)

// Hasher computes, in one pass on the calling goroutine, the whole-object
// BLAKE3-256 digest and the digest of every 64 KiB chunk. The zero value is
// ready to use. It is not safe for concurrent use. Engines use Ingest, which
// spreads the same work over two goroutines.
type Hasher struct {
	whole *blake3.Hasher
	c     chunker
	n     int64
}

// NewHasher returns a ready Hasher.
func NewHasher() *Hasher { return &Hasher{} }

// Write hashes p; it never fails.
func (h *Hasher) Write(p []byte) (int, error) {
	if h.whole == nil {
		h.whole = blake3.New()
	}
	h.whole.Write(p)
	h.c.write(p)
	h.n += int64(len(p))
	return len(p), nil
}

// Sum returns the object id, the chunk digests and the byte count so far.
// The Hasher may continue to be written to afterwards.
func (h *Hasher) Sum() (ID, []ID, int64) {
	if h.whole == nil {
		h.whole = blake3.New()
	}
	var id ID
	h.whole.Sum(id[:0])
	return id, h.c.sums(), h.n
}

// chunker hashes a stream cut into ChunkSize pieces.
type chunker struct {
	h    *blake3.Hasher
	n    int // bytes of the current partial chunk
	done []ID
}

func (c *chunker) write(p []byte) {
	for len(p) > 0 {
		if c.n == 0 && len(p) >= ChunkSize {
			c.done = append(c.done, blake3.Sum256(p[:ChunkSize]))
			p = p[ChunkSize:]
			continue
		}
		if c.h == nil {
			c.h = blake3.New()
		}
		k := min(ChunkSize-c.n, len(p))
		c.h.Write(p[:k])
		c.n += k
		p = p[k:]
		if c.n == ChunkSize {
			c.done = append(c.done, c.partial())
			c.h.Reset()
			c.n = 0
		}
	}
}

func (c *chunker) partial() ID {
	var id ID
	c.h.Sum(id[:0])
	return id
}

// sums returns the completed chunk digests plus the trailing partial chunk.
func (c *chunker) sums() []ID {
	out := make([]ID, len(c.done), len(c.done)+1)
	copy(out, c.done)
	if c.n > 0 {
		out = append(out, c.partial())
	}
	return out
}
