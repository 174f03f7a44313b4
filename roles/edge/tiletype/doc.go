// Package tiletype holds the one table of tile types of docs/edge.md §6.2
// and the content codings of docs/edge.md §6.3, shared by both kinds of pack (PMTiles and
// MBTiles) and by the tile-serving code.
//
// A Type says what a tile is: its Content-Type, the URL extensions accepted
// for it and the one used in TileJSON. The values 0–6 equal the PMTiles v3
// header tile-type codes; JSON (7) exists only for MBTiles (format "json").
// A Coding says how a tile's bytes are stored (none, gzip, brotli, zstd or
// unknown): the Content-Encoding they are sent with, the suffix their ETag
// gets when sent content-encoded (docs/edge.md §4.4), and how to decode them under a size
// cap when the client does not accept the coding.
//
// The package has no state and starts no goroutines.
package tiletype
