// Package pmtiles reads PMTiles v3 archives (docs/edge.md §5, the upstream
// specification, PMTiles v3 from protomaps/PMTiles: spec/v3/spec.md) for the edge role.
//
// The package is a pure reader over an io.ReaderAt: it parses and checks the
// 127-byte header, decodes directories (with every corruption rule of docs/edge.md §5),
// maps (z, x, y) to Hilbert tile ids and back, and finds where a tile's bytes
// lie in the file so the role can serve them with positioned reads. Open runs
// the basic mount checks of docs/edge.md §4.2; Reader.VerifyFull runs the full ones. Leaf
// directories are decoded on demand and kept in a DirCache that several
// readers share under one byte budget. PackID computes the pack identity of
// docs/edge.md §4.4 used in validators and as the cache key.
//
// The package starts no goroutines and holds no global state. A Reader is
// immutable after Open and safe for concurrent use; it does not own the
// io.ReaderAt (the caller closes the file once its reads are done).
package pmtiles
