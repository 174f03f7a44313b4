package index

import (
	"io"

	"github.com/hashicorp/raft"

	"github.com/ronhq/ron/roles/index/namelog"
	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/runtime/cluster"
)

// clusterConfig is Options.ClusterConfig with a zero index_replicas
// defaulted.
func (r *Role) clusterConfig() cluster.Config {
	cc := r.opt.ClusterConfig
	if cc.IndexReplicas <= 0 {
		cc.IndexReplicas = cluster.DefaultConfig().IndexReplicas
	}
	return cc
}

// enableCluster builds the cluster peers from cfg's lookup and breaker
// keys, the names log's state machine over the open store, and switches
// the handlers to cluster mode (before they are mounted).
func (r *Role) enableCluster(cfg Config) {
	ps, _ := newPeerSetup(cfg, "", r.opt.Metrics)
	bo := ps.bo
	bo.OnStateChange = r.breakerMoved
	r.cpeers = ownership.NewPeers(ownership.PeerOptions{Membership: r.opt.Cluster, Self: r.opt.Node.ID,
		Replicas: r.clusterConfig().IndexReplicas, Lookup: ps.hedge, Breaker: bo, Token: r.opt.Node.Token,
		Metrics: r.opt.Metrics})
	r.nameLog.Store(r.h.enableCluster(r.cpeers, r.opt.Plane, r.opt.Fatal, r.opt.Metrics))
}

// namesMachine is the role's state machine of the names log as the node's
// plane holds it from New on: it hands every call to the namelog.FSM over
// the role's store. The node opens the control plane only after the role
// started (the store is open) and closes it before the role stops.
type namesMachine struct{ r *Role }

var _ raft.FSM = namesMachine{}

// fsm is the namelog.FSM; before the store opened it is a wiring bug.
func (m namesMachine) fsm() *namelog.FSM {
	f := m.r.nameLog.Load()
	if f == nil {
		panic("index: the names log was applied before the index store opened")
	}
	return f
}

// Apply implements raft.FSM.
func (m namesMachine) Apply(l *raft.Log) any { return m.fsm().Apply(l) }

// Snapshot implements raft.FSM.
func (m namesMachine) Snapshot() (raft.FSMSnapshot, error) { return m.fsm().Snapshot() }

// Restore implements raft.FSM.
func (m namesMachine) Restore(rc io.ReadCloser) error { return m.fsm().Restore(rc) }

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

// clusterDetails is the "cluster" object of the role's status details.
func (r *Role) clusterDetails() map[string]any {
	own := r.cpeers.Ownership()
	return map[string]any{
		"node_id": own.Self(), "index_members": len(own.Known()),
		"index_alive": len(own.Alive()), "replicas": own.R(), "r_eff": own.REff(), "w_idx": own.WIdx(),
	}
}
