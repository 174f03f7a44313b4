// Package replicate is the storage role's replication in cluster mode
// (docs/cluster.md §4, §9): where one object's copies go (Plan), the
// synchronous copy a write makes to its placement targets and the queueing
// of the rest on repair's normal lane (Replicator.Replicate), which members
// hold an object (Replicator.Placement), and whether a write is an honoured
// replica push (IsReplicaWrite). The storage role builds one Replicator at
// Start in cluster mode, over its engine, its peer client and its repair
// engine, and calls it from its write path and the admin plane.
package replicate
