// Package cluster is ron's process-level membership (docs/cluster.md §2):
// hashicorp/memberlist gossip with node metadata (id, roles, role URLs,
// zone), a membership table owned by one goroutine and read through
// immutable View snapshots, and the [cluster] configuration section. Roles
// read it through the Membership interface; placement math lives in the
// rendezvous subpackage.
package cluster
