// Package registryapi is the registry role's contract (docs/registry.md
// §2, §3, §9): the wire types of its HTTP API, its capability scopes and
// route templates, the Client interface with its HTTP implementation
// (HTTPClient), and the client-side checks of what a client sends and
// reads. Its sub-package descriptor is the descriptor format (sets,
// artifacts, approvals, rules, canonical form and hashing).
//
// Another role may import registryapi and its sub-packages, and nothing
// else of roles/registry. It imports only the project's httpx, store and
// runtime packages and its own sub-packages, never the registry's
// committer, segment log, tiles or HTTP server (roles/registry/httpapi),
// whose LocalClient is the in-process implementation of Client.
package registryapi
