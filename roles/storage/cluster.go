package storage

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/storage/peer"
	"github.com/ronhq/ron/roles/storage/replicate"
	"github.com/ronhq/ron/store"
)

// buildCluster builds the cluster-mode parts once the engine is open
// (docs/cluster.md §4–§5): the peer client, the replicator and the repair
// engine over its link. Start calls it in cluster mode only.
func (r *Role) buildCluster() {
	r.peer = r.newPeers()
	r.replicas = r.newReplicator()
	r.repair.Store(r.newRepairer())
}

// newPeers builds the peer client from the role's options. It also logs,
// once per start, that storage.redundancy = "ec" is not built and writes
// keep replicas.
func (r *Role) newPeers() *peer.Client {
	if r.Cfg.Load().Redundancy == RedundancyEC {
		r.Log.Warn().Msg(`storage.redundancy = "ec": erasure coding is not built in this version; writes keep replicas`)
	}
	return peer.New(peer.Options{Token: r.opt.Node.Token, Stall: r.opt.ClusterConfig.ReplicaStallTimeout, Metrics: r.opt.Metrics})
}

// closePeers releases the peer client's idle connections. Stop calls it once
// no request or repair transfer can use the client any more (a late caller
// still gets a usable client: Close only drops idle connections).
func (r *Role) closePeers() {
	if r.peer != nil {
		r.peer.Close()
	}
}

// newReplicator builds the write path's replicator over the engine's
// verified reads, the peer client and repair's normal lane.
func (r *Role) newReplicator() *replicate.Replicator {
	return replicate.New(replicate.Options{
		Members:           r.opt.Cluster,
		ReplicationFactor: func() int { return r.Cfg.Load().ReplicationFactor },
		Peers:             r.peer,
		Open:              r.openVerified,
		Has:               r.engine.Has,
		QueueRest:         r.queueRemaining,
		Metrics:           r.opt.Metrics,
		Log:               r.Log,
	})
}

// replicate makes the required copies of a held object (docs/cluster.md
// §4, replicate.Replicator.Replicate) and returns the "copies" of the
// reply: 0 when cluster mode is off (no field). A write whose client went
// away fails with *errAborted.
func (r *Role) replicate(ctx context.Context, info store.Info, created, replica bool) (int, error) {
	if r.opt.Cluster == nil {
		return 0, nil
	}
	n, err := r.replicas.Replicate(ctx, info, created, replica)
	var ab *replicate.AbortedError
	if errors.As(err, &ab) {
		return 0, &errAborted{ab.Err}
	}
	return n, err
}

// replicaWrite reports whether a write's X-Ron-Replica: 1 is honoured
// (replicate.IsReplicaWrite): only in cluster mode.
func (r *Role) replicaWrite(c echo.Context) bool {
	if r.opt.Cluster == nil {
		return false
	}
	return replicate.IsReplicaWrite(c.Request(), r.opt.Keys)
}

// errClusterOff answers a placement lookup on a node without cluster mode.
var errClusterOff = httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "cluster mode is off: objects have no placement")

// Placement answers GET /api/v1/cluster/placement/{b3} (docs/cluster.md §9,
// replicate.Replicator.Placement): targets are the ids of top(RF, W, id),
// holders the members that hold id, sorted. err is a 404 *httpx.Error when
// cluster mode is off, 503 not_ready before Start, or the local engine's
// failure.
func (r *Role) Placement(ctx context.Context, id store.ID) (targets, holders []string, err error) {
	if r.opt.Cluster == nil {
		return nil, nil, errClusterOff
	}
	if r.repair.Load() == nil { // not started: no engine, no peer client yet (the admin listener serves first)
		return nil, nil, errNotStarted()
	}
	return r.replicas.Placement(ctx, id)
}
