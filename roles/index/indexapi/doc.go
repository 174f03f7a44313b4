// Package indexapi is the index role's contract: the wire types of its
// HTTP API (names, docs/index.md §3; providers, docs/index.md §4; resolve,
// docs/index.md §5; the compatibility records of docs/index.md §10), its
// capability scopes, the name and key syntax both the server and its
// clients apply, and Client with its HTTP implementation HTTPClient. The in-process implementation, LocalClient,
// lives with the server in roles/index.
//
// Other roles import indexapi (and its sub-package clusterindex, the
// readers' view of the index across a cluster) and nothing else of the
// index role. indexapi imports only the project's httpx, store and runtime
// packages; roles/index and roles/index/indexdb import it, never the other
// way round.
package indexapi

// Capability scopes (docs/architecture.md §6): every index write needs ScopeWrite;
// reads need ScopeRead when public_reads is false.
const (
	ScopeWrite = "index:write"
	ScopeRead  = "index:read"
)

// ScopeReplicate is the node-only scope of /replica/* and X-Ron-Forwarded
// (docs/cluster.md §2): only it or "admin" satisfies it.
const ScopeReplicate = "index:replicate"
