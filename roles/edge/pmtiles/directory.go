package pmtiles

import (
	"encoding/binary"
	"math"
	"sort"
)

// MaxDirEntries caps the entries of one directory (docs/edge.md §5).
const MaxDirEntries = 2_000_000

// EntryBytes is what one cached entry counts against a DirCache budget.
const EntryBytes = 24

// Entry is one directory entry. RunLength > 0: tiles TileID …
// TileID+RunLength−1 share the blob at Offset (relative to the tile-data
// section). RunLength == 0: a leaf directory at Offset (relative to the leaf
// section) whose first tile is TileID. Length is always > 0.
//
// Length and RunLength are 32-bit (as in the reference implementation):
// larger values in an archive are reported as corruption.
type Entry struct {
	TileID    uint64
	Offset    uint64
	Length    uint32
	RunLength uint32
}

// IsLeaf reports whether e points to a leaf directory.
func (e Entry) IsLeaf() bool { return e.RunLength == 0 }

// DecodeDirectory decompresses b with comp (through codecs; nil means the
// built-in decoders) and parses it with ParseDirectory. The decompressed
// directory may not exceed MaxDirBytes.
func DecodeDirectory(b []byte, comp Compression, codecs Codecs) ([]Entry, error) {
	if len(b) > MaxDirBytes {
		return nil, corruptf("directory of %d bytes, over the %d-byte cap", len(b), MaxDirBytes)
	}
	raw, err := codecs.Decompress(comp, b, MaxDirBytes)
	if err != nil {
		return nil, err
	}
	return ParseDirectory(raw)
}

// ParseDirectory parses an uncompressed directory: n, then n tile-id deltas
// (running sum), n run lengths, n lengths, n offsets (0 for i > 0 means the
// previous offset + length, v > 0 means v − 1). Corruption (ErrCorrupt, or
// ErrVarint for a bad varint): more than MaxDirEntries entries, fewer bytes
// than n entries need, a tile id or offset overflowing 64 bits, a length of
// 0, a length or run length above 2^32 − 1, an encoded offset of 0 on the
// first entry, trailing bytes. Zero entries are accepted (root directories
// may be empty; the Reader rejects empty leaves).
func ParseDirectory(raw []byte) ([]Entry, error) {
	d := decoder{b: raw}
	n, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	if n > MaxDirEntries {
		return nil, corruptf("%d entries, over the %d cap", n, MaxDirEntries)
	}
	// Every entry needs at least 4 one-byte varints: refuse before
	// allocating for a count the input cannot hold.
	if n*4 > uint64(len(d.b)) {
		return nil, corruptf("%d entries in %d bytes", n, len(d.b))
	}
	es := make([]Entry, n)
	for _, step := range []func([]Entry) error{d.ids, d.runs, d.lengths, d.offsets} {
		if err := step(es); err != nil {
			return nil, err
		}
	}
	if len(d.b) != 0 {
		return nil, corruptf("%d trailing bytes after the directory", len(d.b))
	}
	return es, nil
}

// decoder consumes varints from b.
type decoder struct{ b []byte }

func (d *decoder) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		return 0, ErrVarint
	}
	d.b = d.b[n:]
	return v, nil
}

func (d *decoder) ids(es []Entry) error {
	var id uint64
	for i := range es {
		v, err := d.uvarint()
		if err != nil {
			return err
		}
		if id+v < id {
			return corruptf("tile id of entry %d overflows", i)
		}
		id += v
		es[i].TileID = id
	}
	return nil
}

func (d *decoder) runs(es []Entry) error {
	for i := range es {
		v, err := d.uvarint()
		if err != nil {
			return err
		}
		if v > math.MaxUint32 {
			return corruptf("run length %d of entry %d", v, i)
		}
		if es[i].TileID+v < es[i].TileID {
			return corruptf("run of entry %d overflows", i)
		}
		es[i].RunLength = uint32(v)
	}
	return nil
}

func (d *decoder) lengths(es []Entry) error {
	for i := range es {
		v, err := d.uvarint()
		if err != nil {
			return err
		}
		if v == 0 || v > math.MaxUint32 {
			return corruptf("length %d of entry %d", v, i)
		}
		es[i].Length = uint32(v)
	}
	return nil
}

func (d *decoder) offsets(es []Entry) error {
	for i := range es {
		v, err := d.uvarint()
		if err != nil {
			return err
		}
		switch {
		case v > 0:
			es[i].Offset = v - 1
		case i == 0:
			return corruptf("offset 0 on the first entry")
		default:
			p := es[i-1]
			es[i].Offset = p.Offset + uint64(p.Length)
			if es[i].Offset < p.Offset {
				return corruptf("offset of entry %d overflows", i)
			}
		}
	}
	return nil
}

// FindEntry returns the last entry of es (sorted by TileID) whose TileID is
// ≤ id, or false when there is none.
func FindEntry(es []Entry, id uint64) (Entry, bool) {
	i := sort.Search(len(es), func(i int) bool { return es[i].TileID > id })
	if i == 0 {
		return Entry{}, false
	}
	return es[i-1], true
}

// checkEntries reports ErrCorrupt when an entry lies outside its section:
// leaf entries within leafLen bytes, tile entries within tileLen bytes.
func checkEntries(es []Entry, leafLen, tileLen uint64) error {
	for i, e := range es {
		limit, what := tileLen, "tile data"
		if e.IsLeaf() {
			limit, what = leafLen, "leaf directory"
		}
		end := e.Offset + uint64(e.Length)
		if end < e.Offset || end > limit {
			return corruptf("entry %d (tile %d): %s [%d, +%d) past its %d-byte section",
				i, e.TileID, what, e.Offset, e.Length, limit)
		}
	}
	return nil
}
