package index

import (
	"context"
	"fmt"
	"time"

	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/roles/index/replication"
	"github.com/ronhq/ron/runtime/cluster"
)

// taskAntiEntropy is the anti-entropy worker's name (docs/cluster.md §6).
const taskAntiEntropy = "index_antientropy"

// clusterConfig is Options.ClusterConfig with zero index keys defaulted.
func (r *Role) clusterConfig() cluster.Config {
	cc, def := r.opt.ClusterConfig, cluster.DefaultConfig()
	if cc.IndexReplicas <= 0 {
		cc.IndexReplicas = def.IndexReplicas
	}
	if cc.IndexSyncInterval <= 0 {
		cc.IndexSyncInterval = def.IndexSyncInterval
	}
	return cc
}

// enableCluster builds the cluster peers from cfg's lookup and breaker keys
// and switches the handlers to cluster mode (before they are mounted).
func (r *Role) enableCluster(cfg Config) {
	ps, _ := newPeerSetup(cfg, "", r.opt.Metrics)
	bo := ps.bo
	bo.OnStateChange = r.breakerMoved
	r.cpeers = ownership.NewPeers(ownership.PeerOptions{Membership: r.opt.Cluster, Self: r.opt.Node.ID,
		Replicas: r.clusterConfig().IndexReplicas, Lookup: ps.hedge, Breaker: bo, Token: r.opt.Node.Token,
		Metrics: r.opt.Metrics})
	r.h.enableCluster(r.cpeers, r.opt.Metrics)
}

// The cluster peers are the handlers' peer source in cluster mode.
var _ PeerSource = (*ownership.Peers)(nil)

// reconfigureCluster is rebuildPeers in cluster mode: index.peers is
// ignored; new lookup or breaker keys rebuild the member clients. Callers
// hold applyMu.
func (r *Role) reconfigureCluster(cfg Config) {
	ps, _ := newPeerSetup(cfg, "", r.opt.Metrics)
	if !r.built || !ps.equal(r.setup) {
		bo := ps.bo
		bo.OnStateChange = r.breakerMoved
		r.cpeers.Reconfigure(ps.hedge, bo)
		r.setup, r.built = ps, true
	}
	s := r.settings(cfg, nil)
	s.Peers = r.cpeers
	r.h.Reconfigure(s)
}

// antiEntropyTask is the worker index_antientropy.
func (r *Role) antiEntropyTask() func(context.Context) error {
	r.syncInterval.Store(int64(r.clusterConfig().IndexSyncInterval))
	ae := replication.AntiEntropy{Interval: func() time.Duration { return time.Duration(r.syncInterval.Load()) },
		Settle: replication.AntiEntropySettle, Membership: r.opt.Cluster, Pass: r.antiEntropyPass}
	return ae.Run
}

// ApplyCluster hot-applies the [cluster] keys the index reads live:
// index_sync_interval, from the pass after the current wait. Other index
// keys (index_replicas) need a restart; the node refuses them before.
func (r *Role) ApplyCluster(c cluster.Config) error {
	if c.IndexSyncInterval <= 0 {
		return fmt.Errorf("cluster.index_sync_interval: must be positive")
	}
	r.syncInterval.Store(int64(c.IndexSyncInterval))
	return nil
}

// antiEntropyPass runs one pass and logs its outcome.
func (r *Role) antiEntropyPass(ctx context.Context) {
	pushed, dropped, err := r.h.cl.rep.AntiEntropyPass(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		r.Log.Warn().Err(err).Int("pushed", pushed).Msg("index anti-entropy pass failed; the next pass retries")
	case pushed > 0 || dropped > 0:
		r.Log.Debug().Int("pushed", pushed).Int("dropped", dropped).Msg("index anti-entropy pass")
	}
}

// clusterDetails is the "cluster" object of the role's status details.
func (r *Role) clusterDetails() map[string]any {
	own := r.cpeers.Ownership()
	return map[string]any{
		"node_id": own.Self(), "index_members": len(own.Known()),
		"index_alive": len(own.Alive()), "replicas": own.R(), "r_eff": own.REff(), "w_idx": own.WIdx(),
	}
}
