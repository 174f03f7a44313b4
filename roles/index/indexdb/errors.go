package indexdb

import (
	"errors"
	"fmt"
)

// Sentinel errors; match them with errors.Is. The HTTP layer maps
// indexapi.ErrInvalid (validation failures) → 400, ErrNotFound → 404,
// ErrPrecondition → 412.
var (
	// ErrNotFound: no live record (name absent or deleted, version above
	// the current one, no providers).
	ErrNotFound = errors.New("indexdb: not found")
	// ErrDeleted matches ErrNotFound too: the name, or the asked version,
	// is a tombstone (details.reason = "deleted").
	ErrDeleted = fmt.Errorf("%w: deleted", ErrNotFound)
	// ErrPruned matches ErrNotFound too: the version existed but was
	// trimmed from history (details.reason = "pruned").
	ErrPruned = fmt.Errorf("%w: pruned", ErrNotFound)
	// ErrPrecondition is matched by every *PreconditionError.
	ErrPrecondition = errors.New("indexdb: precondition failed")
	// ErrExists is matched by the *PreconditionError of a create-only
	// (If-None-Match: *) write on a live name; it also matches
	// ErrPrecondition.
	ErrExists = errors.New("indexdb: name exists")
	// ErrSchema: the kv database was written with another schema.
	ErrSchema = errors.New("indexdb: unsupported schema")
)

// PreconditionError reports a failed If-Match / If-None-Match check.
type PreconditionError struct {
	// Current is the current live version, 0 when there is none (absent or
	// tombstoned name); the HTTP layer renders 0 as null.
	Current uint64
	exists  bool
}

func (e *PreconditionError) Error() string {
	if e.Current == 0 {
		return "indexdb: precondition failed (no live version)"
	}
	return fmt.Sprintf("indexdb: precondition failed (current version %d)", e.Current)
}

// Is matches ErrPrecondition always and ErrExists for create-only failures.
func (e *PreconditionError) Is(target error) bool {
	return target == ErrPrecondition || (e.exists && target == ErrExists)
}
