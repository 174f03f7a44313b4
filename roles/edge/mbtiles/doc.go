// Package mbtiles reads MBTiles tile packs (SQLite files) for the edge role
// (docs/edge.md §4.2, §4.5, §6.2–6.4).
//
// Open checks the 16-byte SQLite header, opens the file read-only and
// immutable (`file:<path>?mode=ro&immutable=1`; the role's watcher re-mounts
// a pack when its file changes) through modernc.org/sqlite with a pool of
// 2 × GOMAXPROCS connections, and runs the basic verification level: a
// `tiles` table or view with the columns zoom_level, tile_column, tile_row
// and tile_data, a `metadata` table or view with name and value, and
// `PRAGMA quick_check` = ok for files up to Options.QuickCheckMaxBytes.
// Pack.VerifyFull runs the full level (quick_check whatever the size, the
// per-tile MD5s of `tiles_with_hash`, and metadata `agg_tiles_hash`).
//
// Tiles are addressed in XYZ; the TMS flip (`tile_row = 2^z − 1 − y`) is done
// here. A Pack is safe for concurrent use; every call that touches the
// database takes a context, and a context that ends interrupts the SQLite
// statement in progress. The package starts no goroutines of its own.
//
// The package gives the role what it needs to answer docs/edge.md §6: the tile type
// (TileType, the shared docs/edge.md §6.2 table of package tiletype), the stored coding
// of each tile (EncodingOf: `1f 8b` = gzip), the zoom range used for the
// 404/204 decision, and the metadata-derived TileJSON fields (Bounds, Center,
// VectorLayers). Deciding 204 for an absent tile inside the zoom range, 404
// outside it, and 400 for a bad extension is the role's job.
package mbtiles
