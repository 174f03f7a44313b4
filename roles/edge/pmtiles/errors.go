package pmtiles

import (
	"errors"
	"fmt"
)

// kindError is a sentinel error that also matches its parents with
// errors.Is, so callers can test for a precise cause (ErrVarint) or a class
// (ErrCorrupt, ErrInvalid).
type kindError struct {
	msg     string
	parents []error
}

func (e *kindError) Error() string { return e.msg }

// Is reports whether target is one of e's parents (transitively).
func (e *kindError) Is(target error) bool {
	for _, p := range e.parents {
		if p == target || errors.Is(p, target) {
			return true
		}
	}
	return false
}

func newKind(msg string, parents ...error) error {
	return &kindError{msg: "pmtiles: " + msg, parents: parents}
}

// Errors returned by this package. Every error caused by the archive's bytes
// matches ErrInvalid; errors found in directories and metadata also match
// ErrCorrupt. I/O errors from the io.ReaderAt and context errors are returned
// wrapped and match neither.
var (
	// ErrInvalid: the bytes are not a valid PMTiles v3 archive.
	ErrInvalid = newKind("invalid archive")
	// ErrShort: the file or header buffer is shorter than 127 bytes (an empty
	// file included).
	ErrShort = newKind("shorter than the 127-byte header", ErrInvalid)
	// ErrBadMagic: the first 7 bytes are not "PMTiles".
	ErrBadMagic = newKind("bad magic", ErrInvalid)
	// ErrFutureVersion: the version byte is above 3 (a future specification
	// this reader does not understand).
	ErrFutureVersion = newKind("unsupported future version", ErrInvalid)
	// ErrOldVersion: the version byte is below 3.
	ErrOldVersion = newKind("unsupported old version", ErrInvalid)
	// ErrSection: a section's offset + length overflows or lies past the end
	// of the file.
	ErrSection = newKind("section outside the file", ErrInvalid)
	// ErrZoom: the header breaks min_zoom ≤ max_zoom ≤ 31.
	ErrZoom = newKind("bad zoom range", ErrInvalid)
	// ErrCompressionCode: internal compression outside 1–4 or tile
	// compression outside 0–4.
	ErrCompressionCode = newKind("bad compression code", ErrInvalid)
	// ErrCorrupt: a directory or the metadata does not decode, or an entry
	// lies outside its section.
	ErrCorrupt = newKind("corrupt archive", ErrInvalid)
	// ErrVarint: a varint is truncated, longer than 10 bytes, or above
	// 2^64 − 1.
	ErrVarint = newKind("bad varint", ErrCorrupt)
	// ErrDepth: a lookup or walk met more than MaxLeafLevels levels of leaf
	// directories.
	ErrDepth = newKind("more than 3 leaf directory levels", ErrCorrupt)
	// ErrUnsupportedCompression: no decoder is configured for a compression
	// code (0 "unknown" unless Codecs provides one). The archive
	// may be valid; this reader cannot decode it.
	ErrUnsupportedCompression = newKind("unsupported compression")
	// ErrInvalidTile: z > 31, or x or y ≥ 2^z, or a tile id above the last
	// z31 id.
	ErrInvalidTile = newKind("tile coordinates out of range")
)

// corruptf returns an error matching ErrCorrupt with a detail message.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}
