package mbtiles

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
)

// tileQuery is the one prepared statement of docs/edge.md §4.5.
const tileQuery = `SELECT tile_data FROM tiles WHERE zoom_level=? AND tile_column=? AND tile_row=?`

// Pack is an open MBTiles file. All methods are safe for concurrent use.
// Its read-mostly fields are set once by Open and never change.
type Pack struct {
	path         string
	size         int64
	db           *sql.DB
	tileStmt     *sql.Stmt
	meta         map[string]string
	minZoom      int
	maxZoom      int
	tileType     TileType
	vectorLayers json.RawMessage

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Path is the absolute path the pack was opened from.
func (p *Pack) Path() string { return p.path }

// Size is the file size in bytes at Open.
func (p *Pack) Size() int64 { return p.size }

// MinZoom and MaxZoom are the pack's zoom range (docs/edge.md §4.5): metadata minzoom and
// maxzoom when valid, else the lowest and highest zoom_level of the tiles.
// A tile request outside it is a 404; an absent tile inside it is a 204.
func (p *Pack) MinZoom() int { return p.minZoom }

// MaxZoom: see MinZoom.
func (p *Pack) MaxZoom() int { return p.maxZoom }

// TileType is the pack's tile type: from metadata format, else sniffed from
// one tile at Open (docs/edge.md §6.2).
func (p *Pack) TileType() TileType { return p.tileType }

// Metadata returns a copy of the metadata table (name → value).
func (p *Pack) Metadata() map[string]string { return maps.Clone(p.meta) }

// MetadataValue returns one metadata value and whether the name exists.
func (p *Pack) MetadataValue(name string) (string, bool) {
	v, ok := p.meta[name]
	return v, ok
}

// VectorLayers returns the vector_layers array of the metadata json value,
// and false when there is none (docs/edge.md §6.4). The bytes must not be modified.
func (p *Pack) VectorLayers() (json.RawMessage, bool) {
	return p.vectorLayers, p.vectorLayers != nil
}

// Bounds returns metadata bounds when valid (ParseBounds), else
// DefaultBounds (docs/edge.md §6.4).
func (p *Pack) Bounds() Bounds {
	if b, ok := ParseBounds(p.meta["bounds"]); ok {
		return b
	}
	return DefaultBounds
}

// Center returns metadata center when valid (ParseCenter), else the middle
// of Bounds. Its zoom is the metadata one clamped into [MinZoom, MaxZoom],
// or MinZoom when absent (docs/edge.md §6.4).
func (p *Pack) Center() Center {
	c, hasZoom, ok := ParseCenter(p.meta["center"])
	if !ok {
		c.Lon, c.Lat = p.Bounds().Mid()
		hasZoom = false
	}
	if !hasZoom {
		c.Zoom = p.minZoom
	}
	c.Zoom = clampZoom(c.Zoom, p.minZoom, p.maxZoom)
	return c
}

// tmsRow converts an XYZ y to the MBTiles (TMS) tile_row: 2^z − 1 − y.
func tmsRow(z, y uint32) int64 { return int64(1)<<z - 1 - int64(y) }

// checkCoord reports ErrInvalidCoord unless z ≤ 31 and x, y < 2^z.
func checkCoord(z, x, y uint32) error {
	if z > MaxZoom || uint64(x) >= uint64(1)<<z || uint64(y) >= uint64(1)<<z {
		return fmt.Errorf("mbtiles: %w: %d/%d/%d", ErrInvalidCoord, z, x, y)
	}
	return nil
}

// Tile reads the tile at XYZ z/x/y (the TMS flip is done here). It returns
// found = false when there is no row or its tile_data is NULL. The data is
// the tile as stored (see EncodingOf); the caller owns it. Errors wrap
// ErrInvalidCoord, ErrClosed, ErrCorrupt, ctx's error, or another database
// error (a tile_data that is neither BLOB nor TEXT is ErrSchema).
func (p *Pack) Tile(ctx context.Context, z, x, y uint32) (data []byte, found bool, err error) {
	if err := checkCoord(z, x, y); err != nil {
		return nil, false, err
	}
	if p.closed.Load() {
		return nil, false, fmt.Errorf("mbtiles: %w", ErrClosed)
	}
	var v any
	err = p.tileStmt.QueryRowContext(ctx, int64(z), int64(x), tmsRow(z, y)).Scan(&v)
	if err == sql.ErrNoRows {
		return nil, false, nil
	}
	if err != nil {
		if p.closed.Load() {
			return nil, false, fmt.Errorf("mbtiles: %w", ErrClosed)
		}
		return nil, false, wrap(nil, fmt.Sprintf("tile %d/%d/%d", z, x, y), err)
	}
	switch d := v.(type) {
	case nil:
		return nil, false, nil
	case []byte:
		return d, true, nil
	case string:
		return []byte(d), true, nil
	}
	return nil, false, fmt.Errorf("mbtiles: %w: tile %d/%d/%d: tile_data is %T", ErrSchema, z, x, y, v)
}

// Stats describes the tiles actually stored.
type Stats struct {
	Tiles     int64 // number of rows in tiles
	GzipTiles int64 // rows whose tile_data starts with 1f 8b (stored gzip-compressed)
	MinZoom   int   // lowest zoom_level (0 when Tiles is 0)
	MaxZoom   int   // highest zoom_level (0 when Tiles is 0)
}

// Stats counts the tiles and their zoom levels (for `ron pack inspect`);
// it reads the whole tiles index, so it is not for the serving path.
func (p *Pack) Stats(ctx context.Context) (Stats, error) {
	if p.closed.Load() {
		return Stats{}, fmt.Errorf("mbtiles: %w", ErrClosed)
	}
	var s Stats
	var lo, hi sql.NullInt64
	err := p.db.QueryRowContext(ctx, `SELECT COUNT(*), MIN(zoom_level), MAX(zoom_level),
		COALESCE(SUM(substr(tile_data, 1, 2) = x'1f8b'), 0) FROM tiles`).Scan(&s.Tiles, &lo, &hi, &s.GzipTiles)
	if err != nil {
		return Stats{}, wrap(nil, "stats", err)
	}
	s.MinZoom, s.MaxZoom = zoomOf(lo.Int64), zoomOf(hi.Int64)
	return s, nil
}

// Close closes the pack. New calls fail with ErrClosed; Close waits for the
// statements already running to finish (each is bounded by its caller's
// ctx) and then closes the file. Calling it again returns the first result.
func (p *Pack) Close() error {
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		if p.tileStmt != nil {
			p.tileStmt.Close()
		}
		p.closeErr = p.db.Close()
	})
	return p.closeErr
}
