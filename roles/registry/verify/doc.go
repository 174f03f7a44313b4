// Package verify is `ron registry verify`, the registry's independent
// verifier (docs/registry.md §9). It talks to a registry only through its
// public HTTP API and checks the log with golang.org/x/mod/sumdb/note and
// golang.org/x/mod/sumdb/tlog (plus roles/registry/registryapi/descriptor
// for the per-version semantic rules); it shares no storage or tree code
// with the server (roles/registry/tiles is never imported).
//
// Run does the docs/registry.md §9 steps in order:
//
//  1. fetch /registry/log/checkpoint and open it with the pinned log key
//     (Options.LogKey) or, unpinned, with the key served at
//     /registry/log/key (a warning is written to Options.Progress); the
//     three body lines (origin, size, root) are parsed here, because
//     tlog.ParseTree accepts only the go.sum database's origin;
//  2. read min_index from /registry/status and fetch every entry bundle
//     from min_index to the checkpoint size;
//  3. run every deep-verifier check on each leaf (canonical re-encoding,
//     version continuity, prev_hash link, payload_b3, at least m valid
//     distinct signers of the previous version's set, monotonic
//     committed_at, leaf hash = level-0 tile), compare every served hash
//     tile with the hashes recomputed from the level below, recompute the
//     root and prove the last leaf's inclusion through tlog.TileHashReader;
//  4. check that /registry/{size−1} is byte-equal to the last leaf and that
//     /registry/head is at or past it;
//  5. with Options.StateFile, prove consistency with the saved (size, root)
//     by tlog.ProveTree/CheckTree and save the new one; with
//     Options.Genesis, pin version 0's payload_b3.
//
// A failed check is a *Mismatch naming the check and, where one applies,
// the version; an unreachable server is an *UnreachableError; any other
// answer the verifier cannot use is an *httpx.Error or a plain error.
package verify
