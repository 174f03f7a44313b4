package mbtiles

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Required columns of the two MBTiles relations (docs/edge.md §4.2).
var (
	tilesColumns    = []string{"zoom_level", "tile_column", "tile_row", "tile_data"}
	metadataColumns = []string{"name", "value"}
)

// checkSchema verifies that tiles and metadata exist as tables or views with
// their required columns.
func (p *Pack) checkSchema(ctx context.Context) error {
	if err := checkRelation(ctx, p.db, "tiles", tilesColumns); err != nil {
		return err
	}
	return checkRelation(ctx, p.db, "metadata", metadataColumns)
}

// relationKind returns "table" or "view" for name, or "" when there is
// neither. SQLite names are case-insensitive.
func relationKind(ctx context.Context, db *sql.DB, name string) (string, error) {
	var kind string
	err := db.QueryRowContext(ctx,
		`SELECT type FROM sqlite_master WHERE type IN ('table','view') AND name = ? COLLATE NOCASE LIMIT 1`,
		name).Scan(&kind)
	if err == sql.ErrNoRows {
		return "", nil
	}
	if err != nil {
		return "", wrap(ErrSchema, "read schema", err)
	}
	return kind, nil
}

// checkRelation verifies that name is a table or view having every column
// in want (case-insensitive).
func checkRelation(ctx context.Context, db *sql.DB, name string, want []string) error {
	kind, err := relationKind(ctx, db, name)
	if err != nil {
		return err
	}
	if kind == "" {
		return fmt.Errorf("mbtiles: %w: no %s table or view", ErrSchema, name)
	}
	have, err := columns(ctx, db, name)
	if err != nil {
		return err
	}
	var missing []string
	for _, c := range want {
		if !have[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("mbtiles: %w: %s %s lacks column(s) %s",
			ErrSchema, kind, name, strings.Join(missing, ", "))
	}
	return nil
}

// columns returns the lower-cased column names of a table or view.
func columns(ctx context.Context, db *sql.DB, name string) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, name)
	if err != nil {
		return nil, wrap(ErrSchema, "columns of "+name, err)
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, wrap(ErrSchema, "columns of "+name, err)
		}
		have[strings.ToLower(c)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ErrSchema, "columns of "+name, err)
	}
	return have, nil
}

// maxCheckMessages bounds how many quick_check lines an error quotes.
const maxCheckMessages = 3

// quickCheck runs PRAGMA quick_check and fails with ErrCorrupt unless its
// only row is "ok".
func (p *Pack) quickCheck(ctx context.Context) error {
	rows, err := p.db.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		return wrap(ErrCorrupt, "quick_check", err)
	}
	defer rows.Close()
	var msgs []string
	n := 0
	for rows.Next() {
		var m sql.NullString
		if err := rows.Scan(&m); err != nil {
			return wrap(ErrCorrupt, "quick_check", err)
		}
		n++
		if len(msgs) < maxCheckMessages {
			msgs = append(msgs, m.String)
		}
	}
	if err := rows.Err(); err != nil {
		return wrap(ErrCorrupt, "quick_check", err)
	}
	if n == 1 && msgs[0] == "ok" {
		return nil
	}
	return fmt.Errorf("mbtiles: %w: quick_check: %d problem(s): %s",
		ErrCorrupt, n, strings.Join(msgs, "; "))
}
