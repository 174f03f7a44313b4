package storage

import (
	"sync"

	"github.com/ronhq/ron/roles/storage/peer"
)

// peerState is a Role's node-to-node client, built on first use in cluster
// mode. It lives outside the Role struct in a table keyed by the Role, so
// that the files of the cluster write path stay apart from role.go.
type peerState struct {
	client func() *peer.Client // sync.OnceValue: builds once, never nil
}

// peerStates maps *Role → *peerState; an entry exists from the first peers()
// call until closePeers.
var peerStates sync.Map

// peers returns the role's peer client (keep-alive pool, node token,
// replica_stall_timeout), building it on first use; nil when cluster mode is
// off. The first call also logs, once, that storage.redundancy = "ec" is not
// built and writes keep replicas.
func (r *Role) peers() *peer.Client {
	if r.opt.Cluster == nil {
		return nil
	}
	v, ok := peerStates.Load(r)
	if !ok {
		v, _ = peerStates.LoadOrStore(r, &peerState{client: sync.OnceValue(r.newPeers)})
	}
	return v.(*peerState).client()
}

// newPeers builds the peer client from the role's options.
func (r *Role) newPeers() *peer.Client {
	if r.cfg.Load().Redundancy == RedundancyEC {
		r.log.Warn().Msg(`storage.redundancy = "ec": erasure coding is not built in this version; writes keep replicas`)
	}
	return peer.New(peer.Options{Token: r.opt.NodeToken, Stall: r.opt.ClusterConfig.ReplicaStallTimeout, Metrics: r.opt.Metrics})
}

// closePeers releases the peer client's idle connections and forgets it; it
// is idempotent and a no-op when no client was built. Stop calls it once no
// request or repair transfer can use the client any more (a late caller still
// gets a usable client: Close only drops idle connections).
func (r *Role) closePeers() {
	if v, ok := peerStates.LoadAndDelete(r); ok {
		v.(*peerState).client().Close()
	}
}
