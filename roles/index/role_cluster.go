package index

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/namelog"
	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/runtime"
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

// taskNamesImport is the worker that imports the names this node held
// before it joined the control plane (docs/cluster.md §14).
const taskNamesImport = "names_import"

// importRetry is the pause after a failed import batch (no leader yet, the
// leader unreachable).
const importRetry = time.Second

// parkUnlogged moves names the store held before the control plane out of
// the replicated state, to be imported through the log (importNames).
func (r *Role) parkUnlogged(ctx context.Context) error {
	n, err := r.db.ParkUnlogged(ctx)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	if n > 0 {
		r.Log.Info().Int("names", n).Msg("names held before the control plane are imported through the log")
	}
	return nil
}

// importNames is the worker names_import: it brings the parked names into
// the log, whole names in batches of up to 1000 records through the
// leader, dropping each batch once committed, until none is left or ctx
// ends; a failed batch is retried after importRetry.
func (r *Role) importNames(ctx context.Context) error {
	imported := 0
	for {
		recs, names, err := r.db.PendingImport(ctx, indexdb.MaxReplicaBatch)
		switch {
		case err != nil:
			r.Log.Warn().Err(err).Msg("names import: reading the parked names failed")
		case len(names) == 0:
			if imported > 0 {
				r.Log.Info().Int("names", imported).Msg("names import finished")
			}
			return nil
		default:
			err = r.h.cl.rep.ImportNames(ctx, recs)
		}
		if err == nil {
			if err = r.db.DropImported(ctx, names); err == nil {
				imported += len(names)
				continue
			}
		}
		r.Log.Debug().Err(err).Msg("names import: batch not taken; retrying")
		if !runtime.Sleep(ctx, importRetry) {
			return nil
		}
	}
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
