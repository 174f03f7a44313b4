package mbtiles

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
)

// VerifyFull runs the full verification level of docs/edge.md §4.2:
// quick_check whatever the file size; when a table tiles_with_hash exists,
// every tile_hash must equal the hex MD5 of its tile_data; when metadata has
// agg_tiles_hash, it must equal AggTilesHash. Hex digests compare
// case-insensitively. Errors wrap ErrCorrupt, ErrHashMismatch, ErrClosed or
// ctx's error. ctx bounds the whole run, which reads every tile.
func (p *Pack) VerifyFull(ctx context.Context) error {
	if p.closed.Load() {
		return fmt.Errorf("mbtiles: %w", ErrClosed)
	}
	if err := p.quickCheck(ctx); err != nil {
		return err
	}
	if err := p.verifyTileHashes(ctx); err != nil {
		return err
	}
	want, ok := p.meta["agg_tiles_hash"]
	if !ok {
		return nil
	}
	got, err := p.AggTilesHash(ctx)
	if err != nil {
		return err
	}
	if !strings.EqualFold(strings.TrimSpace(want), got) {
		return fmt.Errorf("mbtiles: %w: agg_tiles_hash is %s, tiles hash to %s", ErrHashMismatch, want, got)
	}
	return nil
}

// verifyTileHashes checks tiles_with_hash.tile_hash against MD5(tile_data)
// when that table exists.
func (p *Pack) verifyTileHashes(ctx context.Context) error {
	kind, err := relationKind(ctx, p.db, "tiles_with_hash")
	if err != nil || kind != "table" {
		return err
	}
	rows, err := p.db.QueryContext(ctx,
		`SELECT zoom_level, tile_column, tile_row, tile_data, tile_hash FROM tiles_with_hash`)
	if err != nil {
		return wrap(ErrSchema, "read tiles_with_hash", err)
	}
	defer rows.Close()
	for rows.Next() {
		var z, x, y sql.NullInt64
		var data sql.RawBytes
		var want sql.NullString
		if err := rows.Scan(&z, &x, &y, &data, &want); err != nil {
			return wrap(ErrSchema, "read tiles_with_hash", err)
		}
		sum := md5.Sum(data)
		if got := hex.EncodeToString(sum[:]); !strings.EqualFold(strings.TrimSpace(want.String), got) {
			return fmt.Errorf("mbtiles: %w: tiles_with_hash %d/%d/%d: tile_hash %q, data hashes to %s",
				ErrHashMismatch, z.Int64, x.Int64, y.Int64, want.String, got)
		}
	}
	if err := rows.Err(); err != nil {
		return wrap(ErrSchema, "read tiles_with_hash", err)
	}
	return nil
}

// AggTilesHash computes the aggregate tiles hash of docs/edge.md §4.2 (martin's
// agg_tiles_hash): the MD5 over all rows of tiles ordered by zoom_level,
// tile_column, tile_row of the text of z, x and y followed by tile_data (a
// NULL contributes nothing), as upper-case hex. With no tiles it is the MD5
// of nothing.
func (p *Pack) AggTilesHash(ctx context.Context) (string, error) {
	if p.closed.Load() {
		return "", fmt.Errorf("mbtiles: %w", ErrClosed)
	}
	rows, err := p.db.QueryContext(ctx, `SELECT CAST(zoom_level AS TEXT), CAST(tile_column AS TEXT),
		CAST(tile_row AS TEXT), tile_data FROM tiles ORDER BY zoom_level, tile_column, tile_row`)
	if err != nil {
		return "", wrap(ErrSchema, "agg_tiles_hash", err)
	}
	defer rows.Close()
	h := md5.New()
	for rows.Next() {
		if err := hashRow(rows, h); err != nil {
			return "", wrap(ErrSchema, "agg_tiles_hash", err)
		}
	}
	if err := rows.Err(); err != nil {
		return "", wrap(ErrSchema, "agg_tiles_hash", err)
	}
	return strings.ToUpper(hex.EncodeToString(h.Sum(nil))), nil
}

// hashRow feeds one (z, x, y, data) row into h.
func hashRow(rows *sql.Rows, h hash.Hash) error {
	var z, x, y, data sql.RawBytes
	if err := rows.Scan(&z, &x, &y, &data); err != nil {
		return err
	}
	for _, b := range [][]byte{z, x, y, data} {
		h.Write(b)
	}
	return nil
}
