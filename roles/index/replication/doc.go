// Package replication is the write side of the index's cluster mode
// (docs/cluster.md §6): a name write goes to the name's primary (Write:
// applied there under a per-name lock, or forwarded and the primary's
// answer relayed) and is confirmed once W_idx owners hold it; a provider
// batch goes to each record's owners (Announce); the anti-entropy task
// (AntiEntropy, AntiEntropyPass) pushes every name to its current owners
// and drops copies this node no longer owns. It reaches the other members
// through roles/index/ownership.Peers and this node's own index through
// Store and Local. The index role (roles/index) builds a Node in cluster
// mode, serves the /replica/* routes it posts to and runs the task.
package replication
