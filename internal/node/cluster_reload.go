package node

import (
	"context"
	"fmt"

	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
)

// clusterApplier is implemented by roles that hot-apply [cluster] keys: the
// storage role (repair pace, interval, workers, drop_excess) and the index
// role (index_sync_interval).
type clusterApplier interface {
	ApplyCluster(c cluster.Config) error
}

// applyCluster applies a reload in cluster mode: the gossip metadata first
// (memberlist UpdateNode when a role's advertise_url or the zone changed,
// docs/cluster.md §2; a metadata that does not validate rejects the reload
// before anything changed), then the [cluster] keys clusterRestartOnly let
// through, by the roles' ApplyCluster. With cluster mode off nothing reads
// them.
func (n *Node) applyCluster(cur, next *Config) error {
	if n.cluster == nil {
		return nil
	}
	if err := n.cluster.updateMeta(next); err != nil {
		return fmt.Errorf("cluster metadata: %w", err)
	}
	if len(clusterChanges(cur.Cluster, next.Cluster)) == 0 {
		return nil
	}
	for _, e := range enabledEntries(cur) {
		if a, ok := n.roles[e.Name].(clusterApplier); ok {
			if err := a.ApplyCluster(next.Cluster); err != nil {
				return fmt.Errorf("%s: cluster: %w", e.Name, err)
			}
		}
	}
	return nil
}

// readiness is the node's readiness (/readyz, status, systemd): the roles'
// and, in cluster mode, the membership's missing items ("cluster:…").
// While draining the roles' list already says everything is missing.
func (n *Node) readiness(ctx context.Context) runtime.Readiness {
	rd := n.manager.Readiness(ctx)
	if !n.manager.Draining() {
		rd.Missing = append(rd.Missing, n.cluster.ready()...)
	}
	return rd
}
