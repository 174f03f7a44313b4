// Package descriptor is the registry's data model (docs/registry.md §1): the
// DescriptorSet payload and its item rules, canonical form (RFC 8785 JCS via
// github.com/gowebpki/jcs), payload_b3 hashing (BLAKE3-256), Ed25519
// approvals and the signer set that checks them, the SignedArtifact log entry,
// the propose request body, proposal ids and the bootstrap trust roots.
//
// Every function is pure: no I/O, no goroutines, no clocks (callers pass
// now). Errors are *httpx.Error values carrying the docs/registry.md §3 status and code and a
// details object with "reason" and, where it applies, the failing "item"
// index and "field" name, so handlers return them unchanged.
//
// Decoding runs in stages, and the first failing stage decides the answer:
//
//  1. canonicalise: not JSON, invalid UTF-8, trailing data, a duplicate key
//     or a lone surrogate (all found by jcs.Transform) → 400 malformed;
//  2. shape: unknown members of a known kind, missing required members, a
//     wrong JSON type (null included) → 400 malformed;
//  3. size: canonical payload over Limits.MaxPayloadBytes → 413
//     payload_too_large;
//  4. rules: every other docs/registry.md §1 rule → 400 bad_request.
//
// Within a stage the top-level members are checked before the items, items
// in order, and members of one object in byte order of their names, so the
// error for a given input is deterministic.
package descriptor
