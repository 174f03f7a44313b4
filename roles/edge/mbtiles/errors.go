package mbtiles

import (
	"context"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Errors returned by this package; test with errors.Is. Errors from the
// context (context.Canceled, context.DeadlineExceeded) and from the file
// system (fs.ErrNotExist, fs.ErrPermission) are returned wrapped, never
// translated into one of these.
var (
	// ErrNotSQLite: the file is not a regular file or does not start with
	// the 16 bytes "SQLite format 3\x00".
	ErrNotSQLite = errors.New("not an SQLite file")
	// ErrSchema: the database lacks the MBTiles tables or columns, or a
	// statement over them cannot be compiled.
	ErrSchema = errors.New("not an MBTiles schema")
	// ErrCorrupt: SQLite reports the file as damaged (quick_check is not
	// ok, SQLITE_CORRUPT or SQLITE_NOTADB).
	ErrCorrupt = errors.New("corrupt SQLite file")
	// ErrHashMismatch: a tiles_with_hash tile_hash or the metadata
	// agg_tiles_hash does not match the tile data (full verification).
	ErrHashMismatch = errors.New("tile hash mismatch")
	// ErrMetadataTooLarge: the metadata table exceeds
	// Options.MetadataMaxBytes.
	ErrMetadataTooLarge = errors.New("metadata too large")
	// ErrInvalidCoord: z > 31, or x or y ≥ 2^z.
	ErrInvalidCoord = errors.New("invalid tile coordinates")
	// ErrClosed: the pack has been closed.
	ErrClosed = errors.New("pack closed")
)

// isCtxErr reports whether err comes from a context that ended.
func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// isCorrupt reports whether err is an SQLite corruption error.
func isCorrupt(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}

// wrap annotates a database error from step what. Context errors and
// corruption keep their own identity; any other error is tagged with kind.
func wrap(kind error, what string, err error) error {
	switch {
	case isCtxErr(err):
		return fmt.Errorf("mbtiles: %s: %w", what, err)
	case isCorrupt(err):
		return fmt.Errorf("mbtiles: %s: %w: %w", what, ErrCorrupt, err)
	case kind == nil:
		return fmt.Errorf("mbtiles: %s: %w", what, err)
	}
	return fmt.Errorf("mbtiles: %s: %w: %w", what, kind, err)
}
