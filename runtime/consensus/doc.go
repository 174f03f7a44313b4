// Package consensus is the Raft group of a cluster's control plane
// (docs/cluster.md §14): one hashicorp/raft node per server, its log and
// stable store in raft-boltdb (<data>/raft/raft.db, every append fsynced),
// file snapshots beside it, and the Raft transport on its own TCP listener.
// A Group applies opaque commands to the caller's state machine (raft.FSM)
// and acknowledges one only after it is committed on a majority and applied
// here; without a leader, or on a node that is not the leader, it refuses
// with ErrNoQuorum or a *NotLeaderError, never an acknowledgement.
// Bootstrap follows the bootstrap_expect rule (BootstrapSet). The roles do not use it yet: names and the registry move onto it in the next steps of the control-plane work.
package consensus
