// Package namelog is the names' replicated state machine (docs/cluster.md
// §14): a name write becomes an entry of the control plane's Raft log
// (Encode, with the time and history length the leader chose), and every
// server applies the committed entries to its own index database in log
// order (FSM over indexdb.ApplyLogged), so every server holds the same names,
// versions and history, and a compare-and-swap is decided once, by the log.
// Snapshots are the names state of one read transaction
// (indexdb.SnapshotNames). Writer proposes the index role's name writes in
// cluster mode.
package namelog
