package store

import (
	"encoding/hex"
	"fmt"

	"github.com/zeebo/blake3"
)

// ChunkSize is the fixed v1 chunk size: objects are cut into consecutive
// pieces of this many bytes, the last one shorter.
const ChunkSize = 65536

// ID is the BLAKE3-256 digest (unkeyed, 32 bytes) of a complete object.
type ID [32]byte

// idPrefix is the only accepted textual prefix of an id.
const idPrefix = "b3:"

// ParseID parses the canonical form "b3:" followed by exactly 64 lowercase
// hex digits. Anything else (uppercase, bare hex, other lengths, spaces)
// yields an error wrapping ErrBadID.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != len(idPrefix)+64 || s[:len(idPrefix)] != idPrefix {
		return id, fmt.Errorf("%w: want \"b3:\" and 64 lowercase hex digits", ErrBadID)
	}
	h := s[len(idPrefix):]
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return id, fmt.Errorf("%w: invalid character at offset %d (want lowercase hex)", ErrBadID, len(idPrefix)+i)
		}
	}
	if _, err := hex.Decode(id[:], []byte(h)); err != nil {
		return ID{}, fmt.Errorf("%w: %v", ErrBadID, err)
	}
	return id, nil
}

// String returns the canonical form "b3:<64 lowercase hex>".
func (id ID) String() string { return idPrefix + id.Hex() }

// Hex returns the 64 lowercase hex digits of the id without prefix.
func (id ID) Hex() string { return hex.EncodeToString(id[:]) }

// Prefix returns the first 8 hex digits, the only form of an id that may
// appear in logs.
func (id ID) Prefix() string { return hex.EncodeToString(id[:4]) }

// Sum returns the id of b.
func Sum(b []byte) ID { return blake3.Sum256(b) }

// Hasher computes an id incrementally: Write the bytes, then ID. It is not
// safe for concurrent use.
type Hasher struct{ h *blake3.Hasher }

// NewHasher returns a Hasher of no bytes yet.
func NewHasher() *Hasher { return &Hasher{h: blake3.New()} }

// Write hashes p; it never fails.
func (h *Hasher) Write(p []byte) (int, error) { return h.h.Write(p) }

// ID returns the id of the bytes written so far.
func (h *Hasher) ID() ID {
	var id ID
	h.h.Sum(id[:0])
	return id
}

// ChunkCount returns the number of chunks of an object of size bytes:
// ceil(size / ChunkSize); 0 for an empty object (or a negative size).
func ChunkCount(size int64) int {
	if size <= 0 {
		return 0
	}
	return int((size + ChunkSize - 1) / ChunkSize)
}

// ChunkLen returns the length of chunk i of an object of size bytes, or 0
// when i is out of range.
func ChunkLen(size int64, i int) int {
	if i < 0 || i >= ChunkCount(size) {
		return 0
	}
	return int(min(ChunkSize, size-int64(i)*ChunkSize))
}
