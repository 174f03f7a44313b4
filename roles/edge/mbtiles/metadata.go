package mbtiles

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/ronhq/ron/roles/edge/tiletype"
)

// readMetadata reads the metadata table into a map. Rows with a NULL name
// are skipped, a NULL value reads as "", and for a repeated name the first
// row read wins. The names and values together may not exceed maxBytes;
// that is checked before any value is read.
func readMetadata(ctx context.Context, db *sql.DB, maxBytes int64) (map[string]string, error) {
	var total int64
	err := db.QueryRowContext(ctx, `SELECT COALESCE(SUM(COALESCE(octet_length(name), 0) +
		COALESCE(octet_length(value), 0)), 0) FROM metadata`).Scan(&total)
	if err != nil {
		return nil, wrap(ErrSchema, "size metadata", err)
	}
	if total > maxBytes {
		return nil, fmt.Errorf("mbtiles: %w: %d bytes, limit %d", ErrMetadataTooLarge, total, maxBytes)
	}
	rows, err := db.QueryContext(ctx, `SELECT name, value FROM metadata`)
	if err != nil {
		return nil, wrap(ErrSchema, "read metadata", err)
	}
	defer rows.Close()
	meta := map[string]string{}
	for rows.Next() {
		var name, value sql.NullString
		if err := rows.Scan(&name, &value); err != nil {
			return nil, wrap(ErrSchema, "read metadata", err)
		}
		if _, dup := meta[name.String]; name.Valid && !dup {
			meta[name.String] = value.String
		}
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ErrSchema, "read metadata", err)
	}
	return meta, nil
}

// loadZoom sets the zoom range from metadata minzoom/maxzoom; a missing or
// invalid value (not an integer in 0–31), or minzoom > maxzoom, is replaced
// by MIN/MAX(zoom_level) of the tiles, clamped into 0–31. A pack with
// neither usable metadata nor tiles gets 0–0.
func (p *Pack) loadZoom(ctx context.Context) error {
	lo, okLo := parseZoom(p.meta["minzoom"])
	hi, okHi := parseZoom(p.meta["maxzoom"])
	if okLo && okHi && lo <= hi {
		p.minZoom, p.maxZoom = lo, hi
		return nil
	}
	var dlo, dhi sql.NullInt64
	err := p.db.QueryRowContext(ctx, `SELECT MIN(zoom_level), MAX(zoom_level) FROM tiles`).Scan(&dlo, &dhi)
	if err != nil {
		return wrap(ErrSchema, "zoom range", err)
	}
	dataLo, dataHi := zoomOf(dlo.Int64), zoomOf(dhi.Int64)
	if !okLo {
		lo = dataLo
	}
	if !okHi {
		hi = dataHi
	}
	if lo > hi {
		lo, hi = dataLo, dataHi
	}
	p.minZoom, p.maxZoom = lo, hi
	return nil
}

// zoomOf clamps a zoom_level value from the database into 0–MaxZoom.
func zoomOf(v int64) int { return int(min(max(v, 0), MaxZoom)) }

// loadType sets the tile type from metadata format, or else from the magic
// bytes of one tile (docs/edge.md §6.2).
func (p *Pack) loadType(ctx context.Context) error {
	if t, ok := TypeFromFormat(p.meta["format"]); ok {
		p.tileType = t
		return nil
	}
	var head []byte
	err := p.db.QueryRowContext(ctx,
		`SELECT substr(tile_data, 1, ?) FROM tiles WHERE tile_data IS NOT NULL LIMIT 1`, tiletype.SniffLen).Scan(&head)
	switch {
	case err == sql.ErrNoRows:
		p.tileType = TypeUnknown
	case err != nil:
		return wrap(ErrSchema, "sniff tile type", err)
	default:
		p.tileType = SniffType(head)
	}
	return nil
}

// vectorLayers extracts vector_layers from the metadata json value when it
// is a JSON object whose vector_layers is an array; otherwise nil.
func vectorLayers(js string) json.RawMessage {
	if js == "" {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(js), &obj); err != nil {
		return nil
	}
	v := bytes.TrimSpace(obj["vector_layers"])
	if len(v) == 0 || v[0] != '[' {
		return nil
	}
	return v
}
