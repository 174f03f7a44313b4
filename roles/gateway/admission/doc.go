// Package admission holds the gateway's small admission building blocks
// (docs/gateway.md §3, §8, §10), each free of I/O and safe for concurrent
// use: the body cap (BodyCap, CapReader), write/read shedding (Shedder), the
// event-stream gate (StreamGate), the forward deadline (RequestDeadline),
// the tenant metric label rule (Labeler) and the admission counters
// (Rejections).
package admission
