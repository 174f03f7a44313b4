// Package httpapi is the registry's HTTP server (docs/registry.md §2, §3,
// §9): the handlers of every docs/registry.md §2 route over the committer's
// snapshots, the transparency-log routes over the tile tree and the segment
// log, the SSE hub behind GET /registry/stream, and LocalClient, the
// in-process implementation of registryapi.Client that answers like its
// HTTP one. The wire types, scopes and routes it serves are those of
// roles/registry/registryapi, the registry's contract; other roles import
// that package, not this one (the composition root excepted).
//
// Handlers validate on the request goroutine (decode, canonical form, item
// rules, signatures under the committer's CPU semaphore) and hand the result
// to the committer, the single writer. Reads use only immutable snapshots
// (HEAD's pre-encoded body, the proposal view, the published checkpoint).
//
// The SSE hub keeps no queue per subscriber: each stream holds a cursor (the
// next version to send) and reads what it needs from a small ring of recent
// commits or from the log, so a subscriber costs O(1) memory however far
// behind it is. Commits wake every stream through a broadcast channel that
// Notify closes and replaces without blocking.
package httpapi
