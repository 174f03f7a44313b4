// Package ownership is the index's view of its cluster (docs/cluster.md
// §6): which index members own a name or provider record (View: the R
// rendezvous owners of a key, its primary, R_eff and W_idx) and how this
// node reaches them (Peers: one lookup and one write client per alive
// member, the cluster-mode peer source of reads, and the POSTs of
// replication). The index role (roles/index) builds both in cluster mode;
// roles/index/replication sends writes through them.
package ownership
