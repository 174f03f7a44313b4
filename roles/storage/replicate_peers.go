package storage

import (
	"github.com/ronhq/ron/roles/storage/peer"
)

// peers returns the role's node-to-node client (keep-alive pool, node token,
// replica_stall_timeout): nil with cluster mode off or before Start.
func (r *Role) peers() *peer.Client { return r.peer }

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
