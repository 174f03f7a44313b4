package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"
)

// Sidecar layout constants (docs/storage.md §5).
const (
	sidecarMagic   = "RONS"
	sidecarVersion = 1
	sidecarFixed   = 66 // bytes before the content type
	sidecarTrailer = 32
	// SidecarOverhead is the length of a sidecar without content type and
	// chunk digests: 98 + L + 32·C in total.
	SidecarOverhead = sidecarFixed + sidecarTrailer
)

// Sidecar is the per-object metadata file stored next to the data.
type Sidecar struct {
	Size        int64
	ChunkSize   uint32
	Created     time.Time // stored as Unix milliseconds
	Digest      ID
	ContentType string
	Chunks      []ID
}

// EncodedLen returns the length of the encoded sidecar.
func (s Sidecar) EncodedLen() int {
	return SidecarOverhead + len(s.ContentType) + 32*len(s.Chunks)
}

// Info returns the object description held by the sidecar.
func (s Sidecar) Info() Info {
	return Info{ID: s.Digest, Size: s.Size, ContentType: s.ContentType, Created: s.Created, Chunks: len(s.Chunks)}
}

// EncodeSidecar encodes s (little-endian, table of docs/storage.md §5) including
// the trailing BLAKE3 of all preceding bytes. It does not validate s; the
// content type must be at most 255 bytes.
func EncodeSidecar(s Sidecar) []byte {
	b := make([]byte, 0, s.EncodedLen())
	b = append(b, sidecarMagic...)
	b = binary.LittleEndian.AppendUint16(b, sidecarVersion)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Size))
	b = binary.LittleEndian.AppendUint32(b, s.ChunkSize)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.Chunks)))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Created.UnixMilli()))
	b = append(b, s.Digest[:]...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(s.ContentType)))
	b = append(b, s.ContentType...)
	for _, c := range s.Chunks {
		b = append(b, c[:]...)
	}
	t := Sum(b)
	return append(b, t[:]...)
}

// NewSidecar builds the sidecar of a freshly hashed object.
func NewSidecar(id ID, size int64, chunks []ID, meta Meta, created time.Time) Sidecar {
	return Sidecar{Size: size, ChunkSize: ChunkSize, Created: time.UnixMilli(created.UnixMilli()),
		Digest: id, ContentType: meta.ContentType, Chunks: chunks}
}

// DecodeSidecar decodes and validates b: magic, version 1, flags 0, chunk
// size 65536, chunk count C = ceil(N/65536), total length 98 + L + 32·C,
// content type ≤ 255 printable ASCII, trailer hash, and digest == want.
// Errors wrap ErrBadSidecar.
func DecodeSidecar(b []byte, want ID) (Sidecar, error) {
	var s Sidecar
	if len(b) < SidecarOverhead {
		return s, badSidecar("short: %d bytes", len(b))
	}
	le := binary.LittleEndian
	if string(b[0:4]) != sidecarMagic {
		return s, badSidecar("bad magic")
	}
	if v := le.Uint16(b[4:]); v != sidecarVersion {
		return s, badSidecar("unsupported version %d", v)
	}
	if f := le.Uint16(b[6:]); f != 0 {
		return s, badSidecar("reserved flags %#x set", f)
	}
	size := le.Uint64(b[8:])
	if size > 1<<62 {
		return s, badSidecar("size %d out of range", size)
	}
	cs, c := le.Uint32(b[16:]), le.Uint32(b[20:])
	if cs != ChunkSize {
		return s, badSidecar("chunk size %d, want %d", cs, ChunkSize)
	}
	if int64(c) != int64(ChunkCount(int64(size))) {
		return s, badSidecar("chunk count %d does not match size %d", c, size)
	}
	l := int(le.Uint16(b[64:]))
	if l > MaxContentTypeLen {
		return s, badSidecar("content type length %d", l)
	}
	if want := SidecarOverhead + l + 32*int(c); len(b) != want {
		return s, badSidecar("length %d, want %d", len(b), want)
	}
	body := b[:len(b)-sidecarTrailer]
	if Sum(body) != ID(b[len(body):]) {
		return s, badSidecar("trailer hash mismatch")
	}
	if !bytes.Equal(b[32:64], want[:]) {
		return s, badSidecar("digest does not match id %s", want.Prefix())
	}
	ct := string(b[sidecarFixed : sidecarFixed+l])
	if !printableASCII(ct) {
		return s, badSidecar("content type is not printable ASCII")
	}
	s = Sidecar{Size: int64(size), ChunkSize: cs, Created: time.UnixMilli(int64(le.Uint64(b[24:]))),
		Digest: want, ContentType: ct, Chunks: make([]ID, c)}
	off := sidecarFixed + l
	for i := range s.Chunks {
		s.Chunks[i] = ID(b[off+32*i:])
	}
	return s, nil
}

func badSidecar(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadSidecar, fmt.Sprintf(format, args...))
}
