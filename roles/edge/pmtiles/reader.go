package pmtiles

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// MaxLeafLevels is the deepest chain of leaf directories a lookup follows
// below the root; one more level is ErrDepth.
const MaxLeafLevels = 3

// Options configures Open.
type Options struct {
	// PackID keys this archive's leaf directories in Cache (normally
	// PackID(...) of the file, so a replaced file never meets the old
	// file's directories). Empty: an id unique within Cache.
	PackID string
	// Cache holds decoded leaf directories, shared by readers. Nil: a
	// private cache of 4 MiB.
	Cache *DirCache
	// Codecs adds or overrides decoders for internal compression (nil:
	// none, gzip, brotli).
	Codecs Codecs
}

// TileRef locates one tile's stored bytes in the archive file.
type TileRef struct {
	TileID uint64 // the requested tile's id
	Offset int64  // absolute offset in the file
	Length int64  // bytes, > 0; compressed as Header.TileCompression says
}

// Reader reads one PMTiles v3 archive. It is immutable after Open and safe
// for concurrent use. It does not own the io.ReaderAt.
type Reader struct {
	ra       io.ReaderAt
	size     int64
	h        Header
	root     []Entry
	meta     json.RawMessage
	pack     string
	cache    *DirCache
	codecs   Codecs
	warnings []string
}

// Open reads the header, root directory and metadata of the size-byte
// archive behind ra and runs the basic checks of docs/edge.md §4.2: size ≥
// 127, magic, version 3, every section within the file, the zoom and
// compression rules (see ParseHeader and CheckBounds), the root directory
// decodes with each entry inside its section (zero entries allowed), and the
// metadata, when its length is > 0, decodes to a UTF-8 JSON object. The root
// directory is kept in the Reader (pinned, never in the cache). A root
// ending beyond RootLimit is allowed and reported by Warnings. ctx bounds the
// reads (checked before each one).
func Open(ctx context.Context, ra io.ReaderAt, size int64, opt Options) (*Reader, error) {
	if size < HeaderSize {
		return nil, fmt.Errorf("%w: file of %d bytes", ErrShort, size)
	}
	hb, err := readAt(ctx, ra, 0, HeaderSize)
	if err != nil {
		return nil, err
	}
	h, err := ParseHeader(hb)
	if err != nil {
		return nil, err
	}
	if err := h.CheckBounds(size); err != nil {
		return nil, err
	}
	r := &Reader{ra: ra, size: size, h: h, pack: opt.PackID, cache: opt.Cache, codecs: opt.Codecs}
	if r.cache == nil {
		r.cache = NewDirCache(DirCacheOptions{MaxBytes: privateCacheBytes})
	}
	if r.pack == "" {
		r.pack = r.cache.anonID()
	}
	if r.root, err = r.loadRoot(ctx); err != nil {
		return nil, err
	}
	if r.meta, err = r.loadMetadata(ctx); err != nil {
		return nil, err
	}
	if !h.RootInFirst16K() {
		r.warnings = append(r.warnings, fmt.Sprintf("root directory ends at byte %d, beyond the first %d",
			h.RootOffset+h.RootLength, RootLimit))
	}
	return r, nil
}

func (r *Reader) loadRoot(ctx context.Context) ([]Entry, error) {
	if r.h.RootLength > MaxDirBytes {
		return nil, corruptf("root directory of %d bytes, over the %d-byte cap", r.h.RootLength, MaxDirBytes)
	}
	b, err := readAt(ctx, r.ra, r.h.RootOffset, r.h.RootLength)
	if err != nil {
		return nil, err
	}
	es, err := DecodeDirectory(b, r.h.InternalCompression, r.codecs)
	if err == nil {
		err = checkEntries(es, r.h.LeafLength, r.h.TileDataLength)
	}
	if err != nil {
		return nil, fmt.Errorf("root directory: %w", err)
	}
	return es, nil
}

func (r *Reader) loadMetadata(ctx context.Context) (json.RawMessage, error) {
	if r.h.MetadataLength == 0 {
		return json.RawMessage("{}"), nil
	}
	if r.h.MetadataLength > MaxDirBytes {
		return nil, corruptf("metadata of %d bytes, over the %d-byte cap", r.h.MetadataLength, MaxDirBytes)
	}
	b, err := readAt(ctx, r.ra, r.h.MetadataOffset, r.h.MetadataLength)
	if err != nil {
		return nil, err
	}
	raw, err := r.codecs.Decompress(r.h.InternalCompression, b, MaxDirBytes)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	var obj map[string]json.RawMessage
	if !utf8.Valid(raw) {
		return nil, corruptf("metadata is not UTF-8")
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, corruptf("metadata is not a JSON object: %v", err)
	}
	return json.RawMessage(raw), nil
}

// Header returns the archive's header.
func (r *Reader) Header() Header { return r.h }

// Size returns the archive's size in bytes, as given to Open.
func (r *Reader) Size() int64 { return r.size }

// PackID returns the key of this archive's directories in its DirCache.
func (r *Reader) PackID() string { return r.pack }

// Metadata returns the decompressed metadata, a JSON object ("{}" when the
// archive has none). The caller must not modify it.
func (r *Reader) Metadata() json.RawMessage { return r.meta }

// Warnings returns findings that do not prevent mounting (a root directory
// ending beyond RootLimit).
func (r *Reader) Warnings() []string { return append([]string(nil), r.warnings...) }

// RootEntries returns a copy of the root directory.
func (r *Reader) RootEntries() []Entry { return append([]Entry(nil), r.root...) }

// Tile finds tile (z, x, y). It returns ErrInvalidTile for coordinates out
// of range, false when the archive has no such tile, and an error matching
// ErrCorrupt when a leaf directory met on the way is corrupt (the tile-data
// bounds of the result are checked). It does not check the header's zoom
// range.
func (r *Reader) Tile(ctx context.Context, z, x, y uint32) (TileRef, bool, error) {
	id, err := TileID(z, x, y)
	if err != nil {
		return TileRef{}, false, err
	}
	return r.TileByID(ctx, id)
}

// TileByID is Tile for a tile id.
func (r *Reader) TileByID(ctx context.Context, id uint64) (TileRef, bool, error) {
	dir := r.root
	for depth := 0; ; depth++ {
		e, ok := FindEntry(dir, id)
		if !ok {
			return TileRef{}, false, nil
		}
		if !e.IsLeaf() {
			if id-e.TileID >= uint64(e.RunLength) {
				return TileRef{}, false, nil
			}
			return TileRef{TileID: id, Offset: int64(r.h.TileDataOffset + e.Offset), Length: int64(e.Length)}, true, nil
		}
		if depth == MaxLeafLevels {
			return TileRef{}, false, fmt.Errorf("%w: tile %d", ErrDepth, id)
		}
		var err error
		if dir, err = r.leaf(ctx, e); err != nil {
			return TileRef{}, false, err
		}
	}
}

// leaf returns the decoded leaf directory e points to, through the cache.
func (r *Reader) leaf(ctx context.Context, e Entry) ([]Entry, error) {
	key := dirKey{pack: r.pack, offset: e.Offset, length: e.Length}
	return r.cache.get(ctx, key, func() ([]Entry, error) { return r.loadLeaf(ctx, e) })
}

// loadLeaf reads and decodes the leaf directory e points to (e was checked
// to lie inside the leaf section when its parent was decoded) and checks
// that it is not empty and that its entries lie inside their sections.
func (r *Reader) loadLeaf(ctx context.Context, e Entry) ([]Entry, error) {
	b, err := readAt(ctx, r.ra, r.h.LeafOffset+e.Offset, uint64(e.Length))
	if err != nil {
		return nil, err
	}
	es, err := DecodeDirectory(b, r.h.InternalCompression, r.codecs)
	if err == nil && len(es) == 0 {
		err = corruptf("empty leaf directory")
	}
	if err == nil {
		err = checkEntries(es, r.h.LeafLength, r.h.TileDataLength)
	}
	if err != nil {
		return nil, fmt.Errorf("leaf directory at %d (+%d): %w", e.Offset, e.Length, err)
	}
	return es, nil
}

// TileReader returns a reader of ref's bytes in the archive (positioned
// reads on the underlying io.ReaderAt).
func (r *Reader) TileReader(ref TileRef) *io.SectionReader {
	return io.NewSectionReader(r.ra, ref.Offset, ref.Length)
}

// ReadTile reads ref's bytes (as stored, see Header.TileCompression).
func (r *Reader) ReadTile(ctx context.Context, ref TileRef) ([]byte, error) {
	if ref.Offset < 0 || ref.Length <= 0 || ref.Offset > r.size-ref.Length {
		return nil, fmt.Errorf("%w: tile [%d, +%d) outside the file", ErrSection, ref.Offset, ref.Length)
	}
	return readAt(ctx, r.ra, uint64(ref.Offset), uint64(ref.Length))
}

// readAt reads exactly n bytes at off after checking ctx. A short read (the
// file shrank) is an I/O error, not corruption.
func readAt(ctx context.Context, ra io.ReaderAt, off, n uint64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b := make([]byte, n)
	m, err := ra.ReadAt(b, int64(off))
	if m == len(b) {
		return b, nil
	}
	if err == io.EOF || err == nil {
		err = io.ErrUnexpectedEOF
	}
	return nil, fmt.Errorf("pmtiles: read %d bytes at %d: %w", n, off, err)
}
