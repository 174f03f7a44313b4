// Package regstore is the registry role's persistent state (docs/registry.md
// §5, §6): the layout of <data>/registry and <data>/keys, opening and
// recovering registry.db, tlog.db, the segment log and the log key
// (Open), extending the Merkle tree over the log (ExtendTree), the trust
// roots and dev signer key files, and the offline bootstrap `ron registry
// init` runs (Init). The registry role opens its stores through it; the
// registry commands (internal/cli/registrycmd) use Init and DevSignerPath
// on a stopped node. It is not part of the registry's contract: other roles
// never import it.
package regstore
