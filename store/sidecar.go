package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/ronhq/ron/store/bao"
)

// Sidecar layout constants (docs/storage.md §5).
const (
	sidecarMagic = "RONS"
	// SidecarV1 holds an independent digest per chunk; SidecarV2 holds the
	// Bao outboard. Engines write v2; v1 is read until it is upgraded.
	SidecarV1      = 1
	SidecarV2      = 2
	sidecarFixed   = 66 // bytes before the content type
	sidecarTrailer = 32
	// SidecarOverhead is the length of a sidecar without content type and
	// tree data: 98 + L + 32·C (v1) or 98 + L + OutboardSize(N) (v2) in all.
	SidecarOverhead = sidecarFixed + sidecarTrailer
)

// Sidecar is the per-object metadata file stored next to the data.
type Sidecar struct {
	// Version is SidecarV2 for every sidecar an engine writes; SidecarV1
	// for one read from disk that was not upgraded yet.
	Version     int
	Size        int64
	ChunkSize   uint32
	Created     time.Time // stored as Unix milliseconds
	Digest      ID
	ContentType string
	// Outboard (v2) proves every 64 KiB group against Digest.
	Outboard bao.Outboard
	// Chunks (v1) are the independent chunk digests.
	Chunks []ID
}

// EncodedLen returns the length of the encoded sidecar.
func (s Sidecar) EncodedLen() int {
	return SidecarOverhead + len(s.ContentType) + s.TreeLen()
}

// TreeLen is the length of the tree data: the outboard (v2) or the chunk
// digests (v1).
func (s Sidecar) TreeLen() int {
	if s.Version == SidecarV1 {
		return 32 * len(s.Chunks)
	}
	return len(s.Outboard)
}

// Info returns the object description held by the sidecar.
func (s Sidecar) Info() Info {
	return Info{ID: s.Digest, Size: s.Size, ContentType: s.ContentType, Created: s.Created, Chunks: ChunkCount(s.Size)}
}

// EncodeSidecar encodes s (little-endian, table of docs/storage.md §5) in
// its Version's layout, including the trailing BLAKE3 of all preceding
// bytes. It does not validate s; the content type must be at most 255
// bytes.
func EncodeSidecar(s Sidecar) []byte {
	b := make([]byte, 0, s.EncodedLen())
	b = append(b, sidecarMagic...)
	b = binary.LittleEndian.AppendUint16(b, uint16(s.Version))
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Size))
	b = binary.LittleEndian.AppendUint32(b, s.ChunkSize)
	b = binary.LittleEndian.AppendUint32(b, uint32(ChunkCount(s.Size)))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Created.UnixMilli()))
	b = append(b, s.Digest[:]...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(s.ContentType)))
	b = append(b, s.ContentType...)
	if s.Version == SidecarV1 {
		for _, c := range s.Chunks {
			b = append(b, c[:]...)
		}
	} else {
		b = append(b, s.Outboard...)
	}
	t := Sum(b)
	return append(b, t[:]...)
}

// NewSidecar builds the v2 sidecar of a freshly hashed object.
func NewSidecar(id ID, size int64, ob bao.Outboard, meta Meta, created time.Time) Sidecar {
	return Sidecar{Version: SidecarV2, Size: size, ChunkSize: ChunkSize, Created: time.UnixMilli(created.UnixMilli()),
		Digest: id, ContentType: meta.ContentType, Outboard: ob}
}

// Upgraded returns the v2 sidecar of a v1 one: the same metadata with ob,
// the object's proven outboard, in place of the chunk digests.
func (s Sidecar) Upgraded(ob bao.Outboard) Sidecar {
	return NewSidecar(s.Digest, s.Size, ob, Meta{ContentType: s.ContentType}, s.Created)
}

// SidecarVersion returns the format version a sidecar's header states, or
// 0 when b is too short to have one. Nothing else is checked.
func SidecarVersion(b []byte) int {
	if len(b) < 6 || string(b[:4]) != sidecarMagic {
		return 0
	}
	return int(binary.LittleEndian.Uint16(b[4:]))
}

// DecodeSidecar decodes and validates b: magic, version 1 or 2, flags 0,
// chunk size 65536, chunk count C = ceil(N/65536), total length (98 + L +
// 32·C for v1, 98 + L + OutboardSize(N) for v2), an outboard whose header
// states N (v2), content type ≤ 255 printable ASCII, trailer hash, and
// digest == want. The outboard is checked for shape only: it is proven
// against the digest group by group as the data is read. Errors wrap
// ErrBadSidecar.
func DecodeSidecar(b []byte, want ID) (Sidecar, error) {
	if len(b) < SidecarOverhead {
		return Sidecar{}, badSidecar("short: %d bytes", len(b))
	}
	le := binary.LittleEndian
	if string(b[0:4]) != sidecarMagic {
		return Sidecar{}, badSidecar("bad magic")
	}
	v := int(le.Uint16(b[4:]))
	if v != SidecarV1 && v != SidecarV2 {
		return Sidecar{}, badSidecar("unsupported version %d", v)
	}
	if f := le.Uint16(b[6:]); f != 0 {
		return Sidecar{}, badSidecar("reserved flags %#x set", f)
	}
	size := le.Uint64(b[8:])
	if size > 1<<62 {
		return Sidecar{}, badSidecar("size %d out of range", size)
	}
	cs, c := le.Uint32(b[16:]), le.Uint32(b[20:])
	if cs != ChunkSize {
		return Sidecar{}, badSidecar("chunk size %d, want %d", cs, ChunkSize)
	}
	if int64(c) != int64(ChunkCount(int64(size))) {
		return Sidecar{}, badSidecar("chunk count %d does not match size %d", c, size)
	}
	l := int(le.Uint16(b[64:]))
	if l > MaxContentTypeLen {
		return Sidecar{}, badSidecar("content type length %d", l)
	}
	tree := int64(32) * int64(c)
	if v == SidecarV2 {
		tree = bao.OutboardSize(int64(size))
	}
	if want := int64(SidecarOverhead+l) + tree; int64(len(b)) != want {
		return Sidecar{}, badSidecar("length %d, want %d", len(b), want)
	}
	body := b[:len(b)-sidecarTrailer]
	if Sum(body) != ID(b[len(body):]) {
		return Sidecar{}, badSidecar("trailer hash mismatch")
	}
	if !bytes.Equal(b[32:64], want[:]) {
		return Sidecar{}, badSidecar("digest does not match id %s", want.Prefix())
	}
	ct := string(b[sidecarFixed : sidecarFixed+l])
	if !printableASCII(ct) {
		return Sidecar{}, badSidecar("content type is not printable ASCII")
	}
	s := Sidecar{Version: v, Size: int64(size), ChunkSize: cs, Created: time.UnixMilli(int64(le.Uint64(b[24:]))),
		Digest: want, ContentType: ct}
	return s, s.decodeTree(bytes.Clone(body[sidecarFixed+l:]))
}

// decodeTree sets the outboard (v2) or the chunk digests (v1) from their
// bytes, whose length DecodeSidecar checked.
func (s *Sidecar) decodeTree(b []byte) error {
	if s.Version == SidecarV2 {
		ob, err := bao.ParseOutboard(b, s.Size)
		if err != nil {
			return badSidecar("%v", err)
		}
		s.Outboard = ob
		return nil
	}
	s.Chunks = make([]ID, len(b)/32)
	for i := range s.Chunks {
		s.Chunks[i] = ID(b[32*i:])
	}
	return nil
}

func badSidecar(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadSidecar, fmt.Sprintf(format, args...))
}
