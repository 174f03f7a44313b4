// Package consensus is the Raft group of a cluster's control plane
// (docs/cluster.md §14): one hashicorp/raft node per server, its log and
// stable store in raft-boltdb (<data>/raft/raft.db, every append fsynced),
// file snapshots beside it, and the Raft transport on its own TCP listener.
// A Group applies opaque commands to the caller's state machine (raft.FSM)
// and acknowledges one only after it is committed on a majority and applied
// here; without a leader, or on a node that is not the leader, it refuses
// with ErrNoQuorum or a *NotLeaderError, never an acknowledgement.
// Bootstrap follows the bootstrap_expect rule (BootstrapSet). A node's
// Plane holds the state machines of its roles (one Mux, entries told apart
// by their first byte, Kind) and the group they propose through; the index
// role's names are the first machine (roles/index/namelog).
package consensus
