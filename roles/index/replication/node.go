package replication

import (
	"context"
	"sync"

	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/namelog"
	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/runtime"
)

// HeaderForwarded marks a name write forwarded to the leader; its value is
// the forwarding node's id. It is honoured only with indexapi.ScopeReplicate.
const HeaderForwarded = "X-Ron-Forwarded"

// The node-to-node route replication posts provider batches to
// (docs/cluster.md §6); the index role serves it.
const PathReplicaProviders = "/replica/providers"

// Kind and results of ron_index_owner_writes_total (docs/cluster.md §11).
const (
	ownerProvider = "provider"
	resultOK      = "ok"
	resultFailed  = "failed"
)

// Local is what replication needs of this node's own index handlers.
type Local interface {
	// StoreError maps an error of the index database (a name write's
	// verdict) onto the error envelope.
	StoreError(err error) error
	// ApplyProviders stores a provider batch here in one transaction (as
	// POST /providers without its metrics) and invalidates its cached
	// answers.
	ApplyProviders(ctx context.Context, recs []indexapi.Announcement) (indexapi.AnnounceReply, error)
	// InvalidateName drops the cached answers of name.
	InvalidateName(name string)
	// InvalidateObjects drops the cached answers of the records' objects.
	InvalidateObjects(recs []indexapi.Announcement)
	// NameWritten counts one name write acknowledged here (err nil) or
	// refused.
	NameWritten(err error)
}

// Options are what New builds a Node from.
type Options struct {
	// Peers are the index members' clients and the ownership of provider
	// records.
	Peers *ownership.Peers
	// Names writes names through the control-plane log.
	Names namelog.Writer
	// Local is this node's handlers.
	Local Local
	// Metrics receives ron_index_owner_writes_total with role="index"
	// (registered at 0 by New).
	Metrics *runtime.Metrics
}

// Node is the write side of the index's cluster mode: name writes through
// the control-plane log (Write, docs/cluster.md §14) and provider batches
// to their owners (Announce, docs/cluster.md §6). It is safe for
// concurrent use.
type Node struct {
	peers *ownership.Peers
	names namelog.Writer
	local Local
	met   *runtime.Metrics
}

// New returns the Node of opt and registers its metrics at 0.
func New(opt Options) *Node {
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	n := &Node{peers: opt.Peers, names: opt.Names, local: opt.Local, met: opt.Metrics}
	for _, res := range []string{resultOK, resultFailed} {
		n.ownerWrites(ownerProvider, res, 0)
	}
	return n
}

// ownership returns the current View's ownership.
func (n *Node) ownership() ownership.View { return n.peers.Ownership() }

// ownerWrites adds k to ron_index_owner_writes_total{kind,result}.
func (n *Node) ownerWrites(kind, result string, k int) {
	n.met.Counter("index_owner_writes_total", "role", indexapi.RoleName, "kind", kind, "result", result).Add(k)
}

// fanOut posts bodies[i] to member ids[i], all at once, and reports which
// calls succeeded. It returns when every call has.
func (n *Node) fanOut(ctx context.Context, ids []string, path string, bodies [][]byte) []bool {
	ok := make([]bool, len(ids))
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() { // one replica call, joined below
			defer wg.Done()
			ok[i] = n.peers.Post(ctx, ids[i], path, bodies[i]) == nil
		}()
	}
	wg.Wait()
	return ok
}
