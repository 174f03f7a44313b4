package mbtiles

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// HeaderLen is the length of the SQLite file header prefix checked by
// CheckHeader.
const HeaderLen = 16

// sqliteMagic is the first 16 bytes of every SQLite 3 database file.
const sqliteMagic = "SQLite format 3\x00"

// Defaults for Options fields left at zero.
const (
	DefaultQuickCheckMaxBytes = 64 << 20 // docs/edge.md §10 quick_check_max_bytes
	DefaultMetadataMaxBytes   = 16 << 20
)

// Options tune Open. The zero value is valid.
type Options struct {
	// QuickCheckMaxBytes: `PRAGMA quick_check` runs at Open only for files
	// of at most this many bytes; 0 means DefaultQuickCheckMaxBytes and a
	// negative value never runs it at Open. VerifyFull always runs it.
	QuickCheckMaxBytes int64
	// MaxConns is the connection pool size; 0 means 2 × GOMAXPROCS.
	MaxConns int
	// MetadataMaxBytes bounds the total size of the metadata names and
	// values read at Open (ErrMetadataTooLarge beyond); 0 means
	// DefaultMetadataMaxBytes.
	MetadataMaxBytes int64
}

func (o Options) withDefaults() Options {
	if o.QuickCheckMaxBytes == 0 {
		o.QuickCheckMaxBytes = DefaultQuickCheckMaxBytes
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 2 * runtime.GOMAXPROCS(0)
	}
	if o.MetadataMaxBytes <= 0 {
		o.MetadataMaxBytes = DefaultMetadataMaxBytes
	}
	return o
}

// CheckHeader reports whether head starts with the 16-byte SQLite 3 header
// "SQLite format 3\x00"; it returns an error wrapping ErrNotSQLite if not.
func CheckHeader(head []byte) error {
	if len(head) < HeaderLen {
		return fmt.Errorf("mbtiles: %w: %d-byte header", ErrNotSQLite, len(head))
	}
	if string(head[:HeaderLen]) != sqliteMagic {
		return fmt.Errorf("mbtiles: %w: bad magic %q", ErrNotSQLite, head[:HeaderLen])
	}
	return nil
}

// readHeader stats path (it must be a regular file) and checks its header.
// It returns the file size.
func readHeader(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("mbtiles: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("mbtiles: %w: %s is not a regular file", ErrNotSQLite, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("mbtiles: %w", err)
	}
	defer f.Close()
	head := make([]byte, HeaderLen)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return 0, fmt.Errorf("mbtiles: read header: %w", err)
	}
	return fi.Size(), CheckHeader(head[:n])
}

// uriPath percent-escapes the characters of a file path that the SQLite URI
// syntax gives a meaning (%, ? and #).
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
}

// dsn builds the modernc.org/sqlite URI for a read-only, immutable open of
// the absolute path abs; trusted_schema is off so views cannot call
// functions with side effects.
func dsn(abs string) string {
	return "file:" + uriPath(abs) + "?mode=ro&immutable=1&_pragma=trusted_schema(0)"
}

// Open opens the MBTiles file at path and runs the basic verification of
// docs/edge.md §4.2: the SQLite header, a read-only immutable open, the
// tiles and metadata schema, and quick_check for files of at most
// opt.QuickCheckMaxBytes. It then reads the metadata, the zoom range and the
// tile type, and prepares the tile query. The returned Pack must be closed.
//
// Errors wrap ErrNotSQLite, ErrSchema, ErrCorrupt, ErrMetadataTooLarge, a
// file-system error, or ctx's error; ctx bounds every statement Open runs.
func Open(ctx context.Context, path string, opt Options) (*Pack, error) {
	opt = opt.withDefaults()
	size, err := readHeader(path)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("mbtiles: %w", err)
	}
	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("mbtiles: open: %w", err)
	}
	db.SetMaxOpenConns(opt.MaxConns)
	db.SetMaxIdleConns(opt.MaxConns)
	p := &Pack{path: abs, size: size, db: db}
	if err := p.mount(ctx, opt); err != nil {
		db.Close()
		return nil, err
	}
	return p, nil
}

// mount runs the basic checks and loads what serving needs.
func (p *Pack) mount(ctx context.Context, opt Options) error {
	if err := p.checkSchema(ctx); err != nil {
		return err
	}
	if opt.QuickCheckMaxBytes > 0 && p.size <= opt.QuickCheckMaxBytes {
		if err := p.quickCheck(ctx); err != nil {
			return err
		}
	}
	meta, err := readMetadata(ctx, p.db, opt.MetadataMaxBytes)
	if err != nil {
		return err
	}
	p.meta = meta
	if err := p.loadZoom(ctx); err != nil {
		return err
	}
	if err := p.loadType(ctx); err != nil {
		return err
	}
	p.vectorLayers = vectorLayers(meta["json"])
	stmt, err := p.db.PrepareContext(ctx, tileQuery)
	if err != nil {
		return wrap(ErrSchema, "prepare tile query", err)
	}
	p.tileStmt = stmt
	return nil
}
