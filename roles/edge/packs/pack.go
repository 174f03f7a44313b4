package packs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/roles/edge/mbtiles"
	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/roles/edge/tiletype"
)

// Errors of Pack methods.
var (
	// ErrCorrupt: the pack was found corrupt while serving; the Set
	// re-verifies it at its next poll.
	ErrCorrupt = errors.New("packs: pack corrupt")
	// ErrInvalidTile: z > 31, or x or y ≥ 2^z.
	ErrInvalidTile = errors.New("packs: tile coordinates out of range")
	// ErrNotRaw: the pack kind has no raw archive route (MBTiles).
	ErrNotRaw = errors.New("packs: not served raw")
	// ErrMounted: Close was called on a pack a Set owns.
	ErrMounted = errors.New("packs: pack is owned by a Set")
)

// Tile is one tile lookup's result. ID is the PMTiles tile id of (z, x, y)
// for both kinds (the tile ETag is "pk-<pack id>-<ID>"); Data is the tile as
// stored, Coding how it is stored. Found is false for an absent tile.
type Tile struct {
	ID     uint64
	Data   []byte
	Coding tiletype.Coding
	Found  bool
}

// Pack is one opened pack file. Its fields never change after Open, so all
// methods are safe for concurrent use. A pack from a Set stays readable
// while the caller holds the reference Acquire gave it.
type Pack struct {
	name, path, id string
	kind           Kind
	stat           fileStat
	tileType       tiletype.Type
	minZoom        int
	maxZoom        int
	bounds         [4]float64
	center         [3]float64
	meta           map[string]string // string-valued metadata
	metaJSON       json.RawMessage   // the whole metadata as a JSON object
	vectorLayers   json.RawMessage
	coding         tiletype.Coding // PMTiles: the header's tile compression
	warnings       []string

	pm    *pmtiles.Reader
	file  *os.File          // PMTiles only
	cache *pmtiles.DirCache // PMTiles only: purged of this pack at close
	mb    *mbtiles.Pack

	refs       atomic.Int64 // the owner's reference plus one per Acquire
	owned      bool         // a Set owns the pack: Close refuses
	closeOnce  sync.Once
	closeErr   error
	onCorrupt  func(*Pack) // set by the owning Set
	reverified atomic.Bool // re-verified after a corruption report: no more reports
}

// Name is the pack name (the file stem).
func (p *Pack) Name() string { return p.name }

// Kind is the pack's file format.
func (p *Pack) Kind() Kind { return p.kind }

// ID is the pack id of docs/edge.md §4.4: 32 hex digits that change
// whenever the file is replaced or rewritten.
func (p *Pack) ID() string { return p.id }

// Path is the file the pack was opened from.
func (p *Pack) Path() string { return p.path }

// Size is the file size in bytes.
func (p *Pack) Size() int64 { return p.stat.size }

// ModTime is the file's mtime (Last-Modified).
func (p *Pack) ModTime() time.Time { return p.stat.modTime() }

// TileType is the pack's tile type (docs/edge.md §6.2).
func (p *Pack) TileType() tiletype.Type { return p.tileType }

// MinZoom is the lowest zoom of the pack's range (docs/edge.md §4.5, docs/edge.md §6.1).
func (p *Pack) MinZoom() int { return p.minZoom }

// MaxZoom is the highest zoom of the pack's range.
func (p *Pack) MaxZoom() int { return p.maxZoom }

// Bounds is the TileJSON [w, s, e, n], with the docs/edge.md §6.4 default when the pack
// has none or an invalid one.
func (p *Pack) Bounds() [4]float64 { return p.bounds }

// Center is the TileJSON [lon, lat, zoom]: the pack's center with its zoom
// clamped into [MinZoom, MaxZoom], or the middle of Bounds at MinZoom.
func (p *Pack) Center() [3]float64 { return p.center }

// MetaString returns a metadata value that is a string (PMTiles: a JSON
// string member; MBTiles: any metadata row), such as name, description,
// version or attribution.
func (p *Pack) MetaString(key string) (string, bool) {
	v, ok := p.meta[key]
	return v, ok
}

// VectorLayers returns the metadata's vector_layers array (PMTiles
// metadata, or the `json` value of MBTiles metadata), false when there is
// none. The bytes must not be modified.
func (p *Pack) VectorLayers() (json.RawMessage, bool) {
	return p.vectorLayers, p.vectorLayers != nil
}

// Coding returns the coding every tile of a PMTiles pack is stored with
// (the header's tile compression), so a validator can be built without
// reading the tile; known is false for MBTiles, whose tiles each carry
// their own (Tile.Coding).
func (p *Pack) Coding() (c tiletype.Coding, known bool) {
	return p.coding, p.kind == KindPMTiles
}

// Metadata returns the whole metadata as a JSON object (MBTiles: name →
// value). The bytes must not be modified.
func (p *Pack) Metadata() json.RawMessage { return p.metaJSON }

// Warnings lists findings that did not prevent mounting.
func (p *Pack) Warnings() []string { return append([]string(nil), p.warnings...) }

// Tile reads tile (z, x, y) in XYZ. It does not check the zoom range.
// Errors wrap ErrInvalidTile for coordinates out of range, ErrCorrupt when
// the archive is found corrupt (the pack is then re-verified at the Set's
// next poll), or the context's or the file's error.
func (p *Pack) Tile(ctx context.Context, z, x, y uint32) (Tile, error) {
	id, err := pmtiles.TileID(z, x, y)
	if err != nil {
		return Tile{}, fmt.Errorf("%w: %d/%d/%d", ErrInvalidTile, z, x, y)
	}
	t := Tile{ID: id}
	if p.kind == KindMBTiles {
		data, found, err := p.mb.Tile(ctx, z, x, y)
		if err != nil || !found {
			return t, p.failed(err)
		}
		t.Data, t.Found, t.Coding = data, true, tiletype.SniffCoding(data)
		return t, nil
	}
	ref, found, err := p.pm.TileByID(ctx, id)
	if err != nil || !found {
		return t, p.failed(err)
	}
	if t.Data, err = p.pm.ReadTile(ctx, ref); err != nil {
		return t, p.failed(err)
	}
	t.Found, t.Coding = true, p.coding
	return t, nil
}

// failed annotates a serving error, reporting corruption to the owner.
func (p *Pack) failed(err error) error {
	if err == nil {
		return nil
	}
	if !isCorruption(err) {
		return fmt.Errorf("pack %s: %w", p.name, err)
	}
	if p.onCorrupt != nil && !p.reverified.Load() {
		p.onCorrupt(p)
	}
	return fmt.Errorf("%w: pack %s: %w", ErrCorrupt, p.name, err)
}

// isCorruption reports whether a serving error means the file's bytes are
// bad (as opposed to a context ending or a closed pack).
func isCorruption(err error) bool {
	return errors.Is(err, pmtiles.ErrInvalid) || errors.Is(err, mbtiles.ErrCorrupt) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}

// ReadAt reads the raw file (the PMTiles raw route). MBTiles packs return
// ErrNotRaw.
func (p *Pack) ReadAt(b []byte, off int64) (int, error) {
	if p.file == nil {
		return 0, ErrNotRaw
	}
	return p.file.ReadAt(b, off)
}

// Close closes a pack returned by Open, after nothing else uses it. Packs
// owned by a Set are closed by the Set (ErrMounted).
func (p *Pack) Close() error {
	if p.owned {
		return ErrMounted
	}
	p.unref()
	return nil
}

// tryRef takes a reference unless the pack is already closing.
func (p *Pack) tryRef() bool {
	for {
		n := p.refs.Load()
		if n <= 0 {
			return false
		}
		if p.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// unref drops a reference; the last one closes the file.
func (p *Pack) unref() {
	if p.refs.Add(-1) == 0 {
		p.closeFiles()
	}
}

// closeFiles closes the pack's file or database once.
func (p *Pack) closeFiles() error {
	p.closeOnce.Do(func() {
		switch {
		case p.mb != nil:
			p.closeErr = p.mb.Close()
		case p.file != nil:
			p.closeErr = p.file.Close()
			p.cache.Purge(p.id)
		}
	})
	return p.closeErr
}

// closed reports whether the pack's file has been closed (tests).
func (p *Pack) closed() bool { return p.refs.Load() <= 0 }
