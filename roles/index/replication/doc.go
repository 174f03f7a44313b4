// Package replication is the write side of the index's cluster mode: a name
// write becomes an entry of the control-plane log (Write, through
// roles/index/namelog; docs/cluster.md §14) and is acknowledged once it is
// committed on a majority and applied here — a node that is not the leader
// forwards it to the leader and relays the answer; a provider batch goes to
// each record's owners and is confirmed once W_idx of them hold it
// (Announce, docs/cluster.md §6). It reaches the other members through
// roles/index/ownership.Peers and this node's own index through Local. The
// index role (roles/index) builds a Node in cluster mode and serves the
// /replica/providers route it posts to.
package replication
