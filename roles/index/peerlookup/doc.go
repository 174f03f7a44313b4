// Package peerlookup is the index's two hedged peer lookups (docs/index.md
// §6): LookupName asks peers for a name record over GET /names/{key}?local=1
// and LookupProviders for a b3's providers over GET /providers/{b3}?local=1,
// each validating the answers and running httpx/client/hedge over the peers'
// clients. The lookup options (alpha, beta, hedge_ms, deadline_ms, retries)
// default to the docs/index.md §6 and §12 values (hedge.Default*); callers
// that record metrics set Options.Role to the index's role name. Used by the
// role's static peers (roles/index) and by the cluster-mode peer set
// (roles/index/ownership).
package peerlookup
