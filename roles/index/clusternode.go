package index

import (
	"hash/fnv"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/runtime"
)

// HeaderForwarded marks a name write forwarded to its primary; its value is
// the forwarding node's id. It is honoured only with indexapi.ScopeReplicate.
const HeaderForwarded = "X-Ron-Forwarded"

// Kinds and results of ron_index_owner_writes_total (docs/cluster.md §11).
const (
	ownerName     = "name"
	ownerProvider = "provider"
	resultOK      = "ok"
	resultFailed  = "failed"
)

// clusterNode is the handlers' cluster mode (docs/cluster.md §6): who owns
// what, the node-to-node clients and the per-name write locks of a
// primary.
type clusterNode struct {
	peers *ClusterPeers
	met   *runtime.Metrics
	locks nameLocks
}

// newClusterNode returns the cluster mode over peers' membership.
func newClusterNode(peers *ClusterPeers, m *runtime.Metrics) *clusterNode {
	if m == nil {
		m = runtime.NewMetrics(nil)
	}
	cn := &clusterNode{peers: peers, met: m}
	for _, kind := range []string{ownerName, ownerProvider} {
		for _, res := range []string{resultOK, resultFailed} {
			cn.ownerWrites(kind, res, 0)
		}
	}
	cn.pushed(0)
	return cn
}

// enableCluster switches h to cluster mode (before Mount): name writes go
// to their primary, provider batches to their owners, reads prefer owners,
// and Mount adds the /replica/* routes.
func (h *Handlers) enableCluster(cn *clusterNode) { h.cl = cn }

// ownership returns the current View's ownership.
func (cn *clusterNode) ownership() ownership { return cn.peers.ownership() }

// self is this node's id.
func (cn *clusterNode) self() string { return cn.ownership().self() }

// ownerWrites adds n to ron_index_owner_writes_total{kind,result}.
func (cn *clusterNode) ownerWrites(kind, result string, n int) {
	cn.met.Counter("index_owner_writes_total", "role", roleName, "kind", kind, "result", result).Add(n)
}

// pushed adds n to ron_index_antientropy_records_total.
func (cn *clusterNode) pushed(n int) {
	cn.met.Counter("index_antientropy_records_total", "role", roleName).Add(n)
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

// trustedForward reports whether c carries X-Ron-Forwarded with a token
// allowing indexapi.ScopeReplicate; otherwise the header is ignored (docs/cluster.md
// §2).
func (h *Handlers) trustedForward(c echo.Context) bool {
	if c.Request().Header.Get(HeaderForwarded) == "" {
		return false
	}
	_, err := auth.Check(h.keys, c.Request(), indexapi.ScopeReplicate, h.now())
	return err == nil
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
