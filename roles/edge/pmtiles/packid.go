package pmtiles

import (
	"encoding/binary"
	"encoding/hex"

	"github.com/zeebo/blake3"
)

// Pack kinds hashed into PackID (docs/edge.md §4.4 names a kind byte
// without fixing its values; these are ron's).
const (
	KindPMTiles byte = 'p'
	KindMBTiles byte = 'm'
)

// PackHeadBytes is how much of a file's start PackID hashes.
const PackHeadBytes = 16384

// PackID returns the pack id of docs/edge.md §4.4: the first 16 bytes (32
// hex) of BLAKE3(kind ‖ size as u64 LE ‖ mtime in ns as i64 LE ‖ head),
// where head is the file's first min(size, 16 384) bytes; a longer head is
// cut to PackHeadBytes.
func PackID(kind byte, size int64, mtimeNS int64, head []byte) string {
	if len(head) > PackHeadBytes {
		head = head[:PackHeadBytes]
	}
	var pre [17]byte
	pre[0] = kind
	binary.LittleEndian.PutUint64(pre[1:], uint64(size))
	binary.LittleEndian.PutUint64(pre[9:], uint64(mtimeNS))
	h := blake3.New()
	_, _ = h.Write(pre[:])
	_, _ = h.Write(head)
	sum := h.Sum(nil)
	return hex.EncodeToString(sum[:16])
}
