package replication

import (
	"context"
	"errors"

	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/runtime/consensus"
)

// PathReplicaNames is the node-to-node route a node posts the names it
// held before it joined the control plane to, on the leader's index
// (docs/cluster.md §14); the body is indexdb.EncodeReplicaNames'.
const PathReplicaNames = "/replica/names"

// Import appends recs to the log as one import entry on this node, which
// must be the leader (a follower answers 503 no_quorum naming the leader:
// the importer sends to the leader itself). It returns how many records
// became current.
func (n *Node) Import(ctx context.Context, recs []indexdb.Record) (int, error) {
	imported, err := n.names.Import(ctx, recs)
	if err != nil {
		return 0, n.LogError(err)
	}
	return imported, nil
}

// ImportNames brings recs into the log through whichever node leads: here
// when this node leads, else by POST /replica/names to the leader. A nil
// error means the entry is committed and applied on the leader.
func (n *Node) ImportNames(ctx context.Context, recs []indexdb.Record) error {
	_, err := n.names.Import(ctx, recs)
	var nl *consensus.NotLeaderError
	if !errors.As(err, &nl) {
		return err
	}
	body, err := indexdb.EncodeReplicaNames(recs)
	if err != nil {
		return err
	}
	return n.peers.Post(ctx, nl.LeaderID, PathReplicaNames, body)
}
