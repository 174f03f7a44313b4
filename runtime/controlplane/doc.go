// Package controlplane is a node's membership in the cluster's control-plane
// Raft group (docs/cluster.md §14): it opens the group over the node's
// consensus.Plane, gossips the node's Raft address and whether it holds
// state, bootstraps the group by the bootstrap_expect rule, and, on the
// leader, keeps the group's configuration in step with gossip — servers seen
// alive join as voters, other control-plane members as non-voters, and a
// member gone longer than server_remove_after is removed unless that would
// leave too few voters for a majority.
package controlplane
