package store

import (
	"errors"
	"fmt"
)

var (
	// ErrBadID is wrapped by ParseID errors.
	ErrBadID = errors.New("store: bad object id")
	// ErrNotFound: no such object is held.
	ErrNotFound = errors.New("store: object not found")
	// ErrQuarantined: Open or Stat of an id whose only copy was quarantined.
	ErrQuarantined = errors.New("store: object quarantined")
	// ErrTooLarge: the body passed PutOptions.MaxBytes; returned as soon as
	// the crossing byte is read; nothing is stored.
	ErrTooLarge = errors.New("store: object too large")
	// ErrNoSpace: free space (fs) or capacity (memory) would fall below the
	// configured minimum; nothing is stored.
	ErrNoSpace = errors.New("store: insufficient storage")
	// ErrCorrupt is matched (errors.Is) by every *CorruptError.
	ErrCorrupt = errors.New("store: corrupt object")
	// ErrBadMeta: metadata is invalid (content type longer than 255 bytes
	// or not printable ASCII).
	ErrBadMeta = errors.New("store: invalid metadata")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
	// ErrBadSidecar is wrapped by DecodeSidecar errors.
	ErrBadSidecar = errors.New("store: invalid sidecar")
)

// HashMismatchError reports that a Put with PutOptions.Want received bytes
// hashing to another id. Nothing was stored.
type HashMismatchError struct {
	Expected, Actual ID
}

func (e *HashMismatchError) Error() string {
	return fmt.Sprintf("store: hash mismatch: expected %s, got %s", e.Expected, e.Actual)
}

// Corruption kinds reported in CorruptError.Kind and to OnCorrupt hooks.
const (
	KindData    = "data"
	KindSidecar = "sidecar"
)

// CorruptError reports stored bytes that do not match their digest. Chunk is
// the failing chunk index, or -1 when the whole object failed to hash to its
// id. The engine has already quarantined the object when this is returned.
type CorruptError struct {
	ID    ID
	Chunk int
	Kind  string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("store: corrupt object %s: %s, chunk %d", e.ID.Prefix(), e.Kind, e.Chunk)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }
