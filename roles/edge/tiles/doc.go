// Package tiles serves the edge's tile packs over HTTP (docs/edge.md §4.4,
// §4.6 and §6):
//
//   - GET|HEAD /tiles/{name}/{z}/{x}/{y}.{ext}: one tile, with the pack's
//     Content-Type, a strong per-representation ETag
//     ("pk-<pack id>-<tile id>" plus "-gz", "-br" or "-zst" when the stored
//     bytes are sent content-encoded), Accept-Encoding negotiation (stored
//     bytes when the coding is accepted, else decoded on the fly under
//     tile_max_decoded_bytes), 204 for an absent tile, 404 outside the
//     pack's zoom range (details.reason "zoom").
//   - GET|HEAD /tiles/{name}.json: TileJSON 3.0.0 with the base URL rules of
//     docs/edge.md §6.4 (public_url, else the request's scheme and Host, with the
//     X-Forwarded-* headers of trusted peers).
//   - GET|HEAD /packs: the JSON list of mounted packs, sorted by name.
//   - GET|HEAD /packs/{name}.pmtiles: the raw archive with full Range
//     support through positioned reads; MBTiles files are never served raw.
//
// Every answer goes through the httpx/ranges helpers (conditionals, Range,
// multipart) with the file's mtime, clamped to the response's Date, as a
// weak Last-Modified; a request with no precondition and no Range gets
// their answer to it (200 full) without the call. Errors are httpx
// envelopes; CORS and the handler deadline are the role's.
//
// Warm tiles are answered from memory: a TileCacheBytes cache of tiles as
// stored (absent ones too), keyed by pack id and tile id so that a replaced
// pack never answers from its old version, with the header values that
// depend on the tile alone; other header values are formatted once and
// shared. A body in memory leaves with its headers in one write
// (httpx.CoalesceResponse).
//
// Metrics (role="edge"): ron_edge_tiles_total{pack,status} (200, 204, 304,
// 404), ron_edge_range_requests_total{result} (206, 416, 200; GET requests
// carrying Range), ron_edge_bytes_served_total{route} and
// ron_edge_rejects_total{reason} for decompress_cap and invalid_range.
//
// The package starts no goroutines and holds no lock across I/O.
package tiles
