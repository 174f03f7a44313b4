package tiles

import (
	"encoding/binary"
	"fmt"
)

// MaxLeafSize is the largest leaf an entry bundle can carry (u16 length).
const MaxLeafSize = 1<<16 - 1

// EntryBundle encodes leaves as a C2SP tlog-tiles entry bundle: each leaf
// as a big-endian u16 length followed by its bytes. Every leaf must be at
// most MaxLeafSize bytes (Tree.Append refuses larger ones, so every logged
// leaf fits); EntryBundle panics otherwise, as that is a caller bug.
func EntryBundle(leaves [][]byte) []byte {
	n := 0
	for _, l := range leaves {
		if len(l) > MaxLeafSize {
			panic(fmt.Sprintf("tiles: EntryBundle: leaf of %d bytes exceeds %d", len(l), MaxLeafSize))
		}
		n += 2 + len(l)
	}
	out := make([]byte, 0, n)
	for _, l := range leaves {
		out = binary.BigEndian.AppendUint16(out, uint16(len(l)))
		out = append(out, l...)
	}
	return out
}

// ParseEntryBundle decodes an entry bundle into its leaves (sub-slices of
// b). It fails on a truncated length or leaf and on more than TileWidth
// entries.
func ParseEntryBundle(b []byte) ([][]byte, error) {
	var leaves [][]byte
	for len(b) > 0 {
		if len(leaves) == TileWidth {
			return nil, fmt.Errorf("tiles: entry bundle holds more than %d entries", TileWidth)
		}
		if len(b) < 2 {
			return nil, fmt.Errorf("tiles: entry bundle: truncated length")
		}
		n := int(binary.BigEndian.Uint16(b))
		if len(b)-2 < n {
			return nil, fmt.Errorf("tiles: entry bundle: entry %d truncated", len(leaves))
		}
		leaves = append(leaves, b[2:2+n])
		b = b[2+n:]
	}
	return leaves, nil
}
