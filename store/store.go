package store

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ronhq/ron/store/bao"
)

// MaxContentTypeLen is the longest accepted Meta.ContentType.
const MaxContentTypeLen = 255

// Meta is the metadata stored with an object.
type Meta struct {
	// ContentType is stored verbatim: at most 255 bytes of printable ASCII;
	// "" means none.
	ContentType string
}

// Validate returns an error wrapping ErrBadMeta when m cannot be stored.
func (m Meta) Validate() error {
	if len(m.ContentType) > MaxContentTypeLen {
		return fmt.Errorf("%w: content type longer than %d bytes", ErrBadMeta, MaxContentTypeLen)
	}
	if !printableASCII(m.ContentType) {
		return fmt.Errorf("%w: content type is not printable ASCII", ErrBadMeta)
	}
	return nil
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// Info describes a stored object.
type Info struct {
	ID          ID
	Size        int64
	ContentType string
	Created     time.Time // millisecond precision
	Chunks      int       // ChunkCount(Size)
}

// Stats are the engine's gauges. fs counts Objects and Bytes lazily: they
// reflect writes and deletes since Open plus the last Recount.
type Stats struct {
	Objects     int64
	Bytes       int64
	Quarantined int64
}

// PutOptions controls one Put.
type PutOptions struct {
	// Want, when set, is the id the body must hash to; otherwise Put fails
	// with *HashMismatchError and stores nothing.
	Want *ID
	// Meta is stored with a newly created object (ignored when the object
	// already existed: the first writer's metadata stays).
	Meta Meta
	// MaxBytes caps the body size; 0 means no cap.
	MaxBytes int64
	// Size is the body's length when known in advance (a Content-Length;
	// 0 unknown): the engine then hashes while it receives. A body of
	// another length is still stored, hashed after it was received.
	Size int64
}

// Object is an open, readable object. ReadChunk may be called concurrently;
// Close releases it (reads in flight must have returned).
type Object interface {
	// Info describes the object.
	Info() Info
	// Outboard returns the object's Bao outboard, which proves every chunk
	// against the id; nil while the object's sidecar is v1 (not upgraded
	// yet, see BlobStore.Upgrade). Callers must not modify it.
	Outboard() bao.Outboard
	// ReadChunk reads chunk i whole into buf (len(buf) must be at least the
	// chunk's length, ChunkSize is always enough), verifies it (against the
	// id through the outboard; a v1 object against its chunk digest) and
	// returns the chunk bytes (a prefix of buf). On mismatch it
	// returns *CorruptError{ID, i, KindData}; the engine has then quarantined
	// the object and called its OnCorrupt hook.
	ReadChunk(i int, buf []byte) ([]byte, error)
	// Close releases the object.
	Close() error
}

// BlobStore is a content-addressed object store. All methods are safe for
// concurrent use.
type BlobStore interface {
	// Put streams r into the store and returns the object's Info. created is
	// false when the id was already held (the body is then discarded). Errors:
	// *HashMismatchError, ErrTooLarge, ErrNoSpace, ErrBadMeta, the context's
	// error, or the reader's error wrapped with %w. On any error nothing is
	// stored and no temporary data remains.
	Put(ctx context.Context, r io.Reader, opt PutOptions) (info Info, created bool, err error)
	// Open opens an object for verified reading. ErrNotFound, ErrQuarantined,
	// or *CorruptError when the object could not be verified at all.
	Open(ctx context.Context, id ID) (Object, error)
	// Stat describes an object; errors as Open.
	Stat(ctx context.Context, id ID) (Info, error)
	// Delete removes the local copy (ErrNotFound if absent). Open objects
	// may still be read until closed.
	Delete(ctx context.Context, id ID) error
	// Quarantine moves the object out of service (ErrNotFound if absent).
	// reason is informational.
	Quarantine(ctx context.Context, id ID, reason string) error
	// List returns up to limit objects (limit ≤ 0: no limit) with ids
	// greater than *after (all if after is nil), ascending by hex. ID, Size
	// and Chunks are set; ContentType and Created may be zero. Temporary and
	// quarantined objects are excluded.
	List(ctx context.Context, after *ID, limit int) ([]Info, error)
	// Upgrade rewrites a v1 sidecar as v2 (docs/storage.md §5): the data is
	// hashed whole, and only when it hashes to id is the v2 sidecar, with
	// the outboard, put in place of the old one (atomically: written to
	// tmp/, fsynced, renamed). It reports whether it upgraded; false with
	// nil for an object that is already v2 (or an engine with no v1
	// sidecars). Data that does not hash to id is quarantined
	// (*CorruptError); ErrNotFound when the object is absent.
	Upgrade(ctx context.Context, id ID) (bool, error)
	// Has reports, in input order, which ids are held (quarantined: false).
	Has(ctx context.Context, ids []ID) ([]bool, error)
	// Free returns the bytes still acceptable: fs, the file system's
	// available bytes; memory, capacity minus use.
	Free() (int64, error)
	// Probe checks that the store can durably write (fs: create, write
	// 4 KiB, fsync and remove a file in tmp/; memory: nil).
	Probe(ctx context.Context) error
	// Stats returns the current gauges.
	Stats() Stats
	// Close releases the store; later calls fail with ErrClosed.
	Close() error
}

// Hooks are callbacks an engine calls; each may be nil. They are called
// without engine locks held and must not block for long.
type Hooks struct {
	// OnCorrupt is called after an object was found corrupt and quarantined.
	// chunk is the failing chunk, -1 for a whole-object failure; kind is
	// KindData or KindSidecar.
	OnCorrupt func(id ID, chunk int, kind string)
	// OnSidecarRebuilt is called after a missing or invalid sidecar was
	// rebuilt from the data.
	OnSidecarRebuilt func(id ID)
}

// Corrupt calls OnCorrupt when set.
func (h Hooks) Corrupt(id ID, chunk int, kind string) {
	if h.OnCorrupt != nil {
		h.OnCorrupt(id, chunk, kind)
	}
}

// SidecarRebuilt calls OnSidecarRebuilt when set.
func (h Hooks) SidecarRebuilt(id ID) {
	if h.OnSidecarRebuilt != nil {
		h.OnSidecarRebuilt(id)
	}
}

// CheckChunk verifies b, the bytes of chunk i, against the object: a v2
// sidecar proves it against the id through the outboard, a v1 sidecar
// against its chunk digest. It returns a *CorruptError for the chunk on
// mismatch.
func (s *Sidecar) CheckChunk(i int, b []byte) error {
	var ok bool
	if s.Version == SidecarV1 {
		ok = Sum(b) == s.Chunks[i]
	} else {
		ok = bao.VerifyGroup(b, s.Outboard, s.Digest, int64(i)) == nil
	}
	if !ok {
		return &CorruptError{ID: s.Digest, Chunk: i, Kind: KindData}
	}
	return nil
}

// CheckChunkArgs validates ReadChunk arguments for an object of size bytes
// and returns the chunk's length.
func CheckChunkArgs(size int64, i int, buf []byte) (int, error) {
	n := ChunkLen(size, i)
	if n == 0 {
		return 0, fmt.Errorf("store: chunk %d out of range (%d chunks)", i, ChunkCount(size))
	}
	if len(buf) < n {
		return 0, fmt.Errorf("store: buffer of %d bytes too small for chunk of %d", len(buf), n)
	}
	return n, nil
}
