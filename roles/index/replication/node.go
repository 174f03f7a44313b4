package replication

import (
	"context"
	"hash/fnv"
	"net/http"
	"sync"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
)

// HeaderForwarded marks a name write forwarded to its primary; its value is
// the forwarding node's id. It is honoured only with indexapi.ScopeReplicate.
const HeaderForwarded = "X-Ron-Forwarded"

// The node-to-node routes replication posts to (docs/cluster.md §6); the
// index role serves them.
const (
	PathReplicaNames     = "/replica/names"
	PathReplicaProviders = "/replica/providers"
)

// Kinds and results of ron_index_owner_writes_total (docs/cluster.md §11).
const (
	ownerName     = "name"
	ownerProvider = "provider"
	resultOK      = "ok"
	resultFailed  = "failed"
)

// Store is this node's index database as replication uses it
// (*indexdb.DB): name writes under a condition, and the paged scan and
// conditional drop of anti-entropy.
type Store interface {
	Set(ctx context.Context, name string, target store.ID, cond indexapi.Cond) (indexdb.Record, error)
	Delete(ctx context.Context, name string, cond indexapi.Cond) (indexdb.Record, error)
	ScanNames(ctx context.Context, after string, limit int) ([]indexdb.Record, error)
	DropName(ctx context.Context, rec indexdb.Record) (bool, error)
}

// Local is what replication needs of this node's own index handlers.
type Local interface {
	// StoreError maps an error of Store onto the error envelope.
	StoreError(err error) error
	// ApplyProviders stores a provider batch here in one transaction (as
	// POST /providers without its metrics) and invalidates its cached
	// answers.
	ApplyProviders(ctx context.Context, recs []indexapi.Announcement) (indexapi.AnnounceReply, error)
	// InvalidateName drops the cached answers of name.
	InvalidateName(name string)
	// InvalidateObjects drops the cached answers of the records' objects.
	InvalidateObjects(recs []indexapi.Announcement)
	// NameWritten counts one name write committed here (err nil) or
	// refused by the store.
	NameWritten(err error)
}

// Options are what New builds a Node from.
type Options struct {
	// Peers are the index members' clients and the ownership of keys.
	Peers *ownership.Peers
	// Store is this node's database; Local its handlers.
	Store Store
	Local Local
	// Metrics receives ron_index_owner_writes_total and
	// ron_index_antientropy_records_total with role="index" (both
	// registered at 0 by New).
	Metrics *runtime.Metrics
}

// Node is the write side of the index's cluster mode (docs/cluster.md §6):
// name writes through their primary (Write), provider batches to their
// owners (Announce) and the anti-entropy pass (AntiEntropyPass). It holds
// the per-name write locks of a primary. It is safe for concurrent use.
type Node struct {
	peers *ownership.Peers
	db    Store
	local Local
	met   *runtime.Metrics
	locks nameLocks
}

// New returns the Node of opt and registers its metrics at 0.
func New(opt Options) *Node {
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	n := &Node{peers: opt.Peers, db: opt.Store, local: opt.Local, met: opt.Metrics}
	for _, kind := range []string{ownerName, ownerProvider} {
		for _, res := range []string{resultOK, resultFailed} {
			n.ownerWrites(kind, res, 0)
		}
	}
	n.pushed(0)
	return n
}

// ownership returns the current View's ownership.
func (n *Node) ownership() ownership.View { return n.peers.Ownership() }

// ownerWrites adds k to ron_index_owner_writes_total{kind,result}.
func (n *Node) ownerWrites(kind, result string, k int) {
	n.met.Counter("index_owner_writes_total", "role", indexapi.RoleName, "kind", kind, "result", result).Add(k)
}

// pushed adds k to ron_index_antientropy_records_total.
func (n *Node) pushed(k int) {
	n.met.Counter("index_antientropy_records_total", "role", indexapi.RoleName).Add(k)
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

// nameLocks serialises a primary's writes per name (striped: names that
// share a stripe also share the lock). A lock is held only around the
// local transaction, never across network I/O.
type nameLocks [64]sync.Mutex

// lock locks name's stripe and returns its unlock.
func (l *nameLocks) lock(name string) func() {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	m := &l[h.Sum32()%uint32(len(l))]
	m.Lock()
	return m.Unlock
}

// errNoOwners is the 503 when no index member is alive to own a key.
func errNoOwners() *httpx.Error {
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable, "no alive index owner")
}

// errCopies is the 503 of a write that reached fewer than required owners:
// its outcome is unknown (retry with If-Match).
func errCopies(copies, required int) *httpx.Error {
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable,
		"the write reached %d of %d required index owners", copies, required).
		WithDetails(map[string]any{"copies": copies, "required": required})
}
