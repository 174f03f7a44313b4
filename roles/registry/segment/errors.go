package segment

import (
	"errors"
	"fmt"
)

// Errors returned by the log. Corruption is reported as a *CorruptError,
// which matches ErrCorrupt with errors.Is.
var (
	// ErrNotFound: the version is at or above Next().
	ErrNotFound = errors.New("segment: version not in log")
	// ErrPruned: the version lies below min_index.
	ErrPruned = errors.New("segment: version pruned")
	// ErrInvalid: bad arguments or options; nothing was written.
	ErrInvalid = errors.New("segment: invalid argument")
	// ErrBroken: an earlier append failed with an I/O error; the log refuses
	// every further append until it is reopened.
	ErrBroken = errors.New("segment: log broken by an earlier write error")
	// ErrClosed: the log was closed.
	ErrClosed = errors.New("segment: log closed")
	// ErrCorrupt: a segment's bytes fail a check.
	ErrCorrupt = errors.New("segment: corrupt")
	// ErrRecovery: Open found damage it must not repair (a gap, a bad
	// non-final header, or a tail at or below the durable HEAD).
	ErrRecovery = errors.New("segment: recovery failed")
)

// Names of the checks a record or segment can fail (CorruptError.Check).
// The deep verifier maps CheckCRC and CheckVersion onto its metric labels.
const (
	CheckHeader    = "header"
	CheckTruncated = "truncated"
	CheckLength    = "length"
	CheckCRC       = "crc"
	CheckCorrID    = "corr_id"
	CheckVersion   = "version"
	CheckArtifact  = "artifact"
)

// CorruptError names where a segment failed a check: the segment file, the
// byte offset of the record (or header), the version due there and the check.
type CorruptError struct {
	Segment string // file name, e.g. seg-00000000000000000000.log; empty from DecodeRecord
	Offset  int64
	Version uint64
	Check   string
	Detail  string
}

// Error renders "segment <file> offset <n> version <v>: <check> check failed: <detail>".
func (e *CorruptError) Error() string {
	msg := fmt.Sprintf("segment %s offset %d version %d: %s check failed", e.Segment, e.Offset, e.Version, e.Check)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// placed returns a copy of e positioned at segment name, offset off and
// version v.
func (e *CorruptError) placed(name string, off int64, v uint64) *CorruptError {
	out := *e
	out.Segment, out.Offset, out.Version = name, off, v
	return &out
}
