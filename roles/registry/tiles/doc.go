// Package tiles is the server side of the registry's transparency log
// (docs/registry.md §5): an RFC 6962 Merkle tree over the registry's leaves
// (one SignedArtifact's JCS bytes per version, leaf index = version), stored
// as C2SP tlog-tiles hash tiles in a kv.DB, with signed C2SP tlog-checkpoint
// notes, the tile path syntax, entry bundles and the log's Ed25519 note key.
//
// Tile layout (tile height 8, the same as golang.org/x/mod/sumdb/tlog's tiles
// with H = 8): level-L tile N holds the level-L hashes [256·N, 256·N+256),
// where level-0 hashes are leaf hashes SHA-256(0x00‖leaf) and a level-L hash
// is the root of a complete subtree of 256^L leaves. Every tile is stored
// under its (level, index) key; the rightmost tile of each level is stored at
// its current width and overwritten as it grows, so a partial tile's content
// is a prefix of every later version of that tile.
//
// Storage (bucket names and keys are part of the on-disk format of
// <data>/registry/tlog.db): bucket "tiles" maps level byte ‖ index u64 BE to
// the tile's hashes (32 bytes each, 8,192 for a full tile); bucket
// "checkpoint" maps "note" to the latest signed checkpoint. Tiles and the
// checkpoint covering them are written in one kv transaction, so a reopened
// tree is always consistent with its checkpoint.
//
// Hashing and proofs use github.com/transparency-dev/merkle (rfc6962, compact
// ranges, proof node selection); independent verifiers are expected to use
// golang.org/x/mod/sumdb/tlog, so the two sides share no tree code.
package tiles
