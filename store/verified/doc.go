// Package verified is the verified transfer of docs/storage.md §4: an
// object's chunk list (GET /o/{b3}/chunks) is parsed strictly (ParseList),
// and a stream of the object's bytes, whole or a chunk-aligned range, is read
// through a Reader that releases each 64 KiB chunk only after it hashed to
// its list entry and, for a whole object, holds the last chunk back until
// the BLAKE3 of all bytes equals the id. No consumer ever receives a complete
// wrong body.
//
// The list is authenticated by the id only once the whole object has been
// hashed: a consumer that releases range data earlier trusts the provider's
// list (the known v1 limitation of docs/storage.md §4).
//
// The package does no I/O of its own and starts no goroutines; callers bound
// the underlying reads (deadlines, progress timers).
package verified

import (
	"errors"
	"fmt"
)

var (
	// ErrMismatch is matched (errors.Is) by every *MismatchError: a chunk or
	// the whole object did not hash to its expected digest.
	ErrMismatch = errors.New("verified: hash mismatch")
	// ErrShort: the stream ended (EOF) before the expected bytes arrived.
	ErrShort = errors.New("verified: stream ended early")
	// ErrLong: the stream went on past the expected bytes.
	ErrLong = errors.New("verified: stream longer than expected")
	// ErrBadList is wrapped by ParseList errors and by the error of a Reader
	// built on an inconsistent List or chunk range.
	ErrBadList = errors.New("verified: invalid chunk list")
)

// MismatchError reports a failed verification. Chunk is the index of the
// chunk that did not hash to its list entry, or -1 when every chunk matched
// but the whole object did not hash to the id.
type MismatchError struct {
	Chunk int
}

func (e *MismatchError) Error() string {
	if e.Chunk < 0 {
		return "verified: hash mismatch: the whole object does not hash to its id"
	}
	return fmt.Sprintf("verified: hash mismatch: chunk %d does not hash to its list entry", e.Chunk)
}

// Is makes errors.Is(err, ErrMismatch) true.
func (e *MismatchError) Is(target error) bool { return target == ErrMismatch }
