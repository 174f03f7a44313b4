package node

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/consensus"
	"github.com/ronhq/ron/runtime/controlplane"
)

// controlPlaneStopTimeout bounds the control-plane part's stop: the
// member loop ends and Raft shuts down (it waits for nothing remote).
const controlPlaneStopTimeout = 5 * time.Second

// controlPlane is the node's part in the control-plane group
// (docs/cluster.md §14): the plane the roles register their machines in,
// and, once started, the node's Raft member and its loop.
type controlPlane struct {
	plane  *consensus.Plane
	member *controlplane.Member // nil until started
	cancel context.CancelFunc
	wg     sync.WaitGroup // control-plane-members
}

// takesPart reports whether cfg's node is a member of the control-plane
// group: a server, or a cluster node running the index or the registry
// (a non-voter that replicates the log for fast local reads).
func takesPart(cfg *Config) bool {
	return cfg.Cluster.Enabled && (cfg.Cluster.Server || cfg.Enabled(indexapi.RoleName) || cfg.Enabled(registryapi.RoleName))
}

// buildControlPlane makes the plane of a node that takes part; the roles
// built after it register their state machines in it.
func (n *Node) buildControlPlane(cfg *Config) {
	if !takesPart(cfg) {
		return
	}
	n.cp = &controlPlane{plane: consensus.NewPlane()}
	n.cp.plane.SetNoQuorumReason(func() string { return noQuorumReason(n.cluster.membership().View()) })
}

// noQuorumReason tells a client why the control plane has no leader, and
// what fixes it.
func noQuorumReason(v *cluster.View) string {
	servers, alive := 0, 0
	for _, m := range v.Members {
		if m.Raft.Server {
			servers++
			if m.Alive() {
				alive++
			}
		}
	}
	if servers == 0 {
		return "the cluster has no control-plane server: set [cluster] server = true and bootstrap_expect = 3 on three nodes (docs/cluster.md §14)"
	}
	return fmt.Sprintf("the control plane has no leader: %d of the %d servers known here are reachable and a majority must be; retry later", alive, servers)
}

// startControlPlane opens the node's Raft member over the plane (after the
// roles opened their stores) and starts its loop.
func (n *Node) startControlPlane(context.Context) error {
	cfg := n.cfg.Load()
	bind, err := cfg.Cluster.RaftBind()
	if err != nil {
		return err
	}
	adv, err := cfg.Cluster.RaftAdvertiseAddr()
	if err != nil {
		return err
	}
	dir := ""
	if !cfg.Amnesia {
		dir = filepath.Join(cfg.DataDir, "raft")
	}
	m, err := controlplane.Open(controlplane.Options{ID: n.nodeID, Server: cfg.Cluster.Server,
		BootstrapExpect: cfg.Cluster.BootstrapExpect, RemoveAfter: cfg.Cluster.ServerRemoveAfter,
		Dir: dir, Bind: bind, Advertise: adv, Profile: consensus.Profile(cfg.Cluster.Profile), Plane: n.cp.plane,
		Membership: n.cluster.membership(), Announce: n.cluster.setRaft, Log: n.log, Metrics: n.metrics})
	if err != nil {
		return fmt.Errorf("control plane: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.cp.member, n.cp.cancel = m, cancel
	n.cp.wg.Go(func() { m.Run(ctx) }) // control-plane-members: ends at stopControlPlane
	return nil
}

// stopControlPlane ends the loop and closes the Raft member, before the
// roles close their stores.
func (n *Node) stopControlPlane() {
	if n.cp == nil || n.cp.member == nil {
		return
	}
	n.cp.cancel()
	n.cp.wg.Wait()
	if err := n.cp.member.Close(); err != nil {
		n.log.Warn().Err(err).Msg("control plane close")
	}
}

// plane is the node's plane, nil when it takes no part.
func (n *Node) plane() *consensus.Plane {
	if n.cp == nil {
		return nil
	}
	return n.cp.plane
}
