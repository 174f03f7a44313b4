package roles

import (
	"context"
	"fmt"
	"slices"

	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
)

// clusterApplier is implemented by roles that hot-apply [cluster] keys: the
// storage role (repair pace, interval, workers, drop_excess) and the index
// role (index_sync_interval).
type clusterApplier interface {
	ApplyCluster(c cluster.Config) error
}

// applyCluster applies a reload's [cluster] changes in cluster mode (the
// keys clusterRestartOnly let through): the roles' ApplyCluster, then the
// zone through the membership's UpdateNode. With cluster mode off nothing
// reads them.
func (n *Node) applyCluster(cur, next *Config) error {
	changed := clusterChanges(cur.Cluster, next.Cluster)
	if n.cluster == nil || len(changed) == 0 {
		return nil
	}
	for _, e := range enabledEntries(cur) {
		if a, ok := n.roles[e.Name].(clusterApplier); ok {
			if err := a.ApplyCluster(next.Cluster); err != nil {
				return fmt.Errorf("%s: cluster: %w", e.Name, err)
			}
		}
	}
	if slices.Contains(changed, "zone") {
		if err := n.cluster.updateMeta(next); err != nil {
			return fmt.Errorf("cluster.zone: %w", err)
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
