// Package api is the registry's HTTP surface (docs/registry.md §2, §3, §9):
// the handlers of every docs/registry.md §2 route over the committer's snapshots, the
// transparency-log routes over the tile tree and the segment log, the SSE
// hub behind GET /registry/stream, and the registry Client with an HTTP and
// an in-process implementation that answer alike.
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
package api
