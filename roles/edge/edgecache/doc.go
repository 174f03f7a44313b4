// Package edgecache is the edge's one cache store (docs/edge.md §8): /o
// objects (a blob named by its id, plus its Content-Type) and /assets
// entries (stored responses, one per variant of a key, each pointing at a
// blob named by its BLAKE3), bounded by a byte budget with LRU eviction.
//
// With Options.Dir set, blobs live in <Dir>/blobs/<2 hex>/<64 hex> and the
// index in <Dir>/meta.db (bbolt); a fill is written to <Dir>/blobs/tmp/,
// fsynced and renamed once its hash is known, then the index entry is
// committed, so an entry that was committed survives a crash and a crash
// mid-fill leaves nothing visible. With Dir == "" (amnesia) the same
// structure lives in memory and nothing ever touches the disk.
//
// Readers never block writers: a Blob or Follower keeps its bytes (an open
// file, or a reference to the byte chunks) until it is closed, even when the
// entry is evicted meanwhile. No mutex is held across file I/O.
package edgecache
