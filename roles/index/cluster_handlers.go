package index

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/roles/index/replication"
	"github.com/ronhq/ron/runtime"
)

// clusterMode is the handlers' cluster mode (docs/cluster.md §6): who owns
// what and the member clients (peers), and the writes through the owners
// (rep).
type clusterMode struct {
	peers *ownership.Peers
	rep   *replication.Node
}

// enableCluster switches h to cluster mode over peers (before Mount): name
// writes go to their primary, provider batches to their owners, reads
// prefer owners, and Mount adds the /replica/* routes.
func (h *Handlers) enableCluster(peers *ownership.Peers, m *runtime.Metrics) {
	rep := replication.New(replication.Options{Peers: peers, Store: h.db, Local: localIndex{h}, Metrics: m})
	h.cl = &clusterMode{peers: peers, rep: rep}
}

// localIndex is the handlers as replication.Local.
type localIndex struct{ h *Handlers }

// StoreError maps an indexdb error onto the envelope (dbError).
func (l localIndex) StoreError(err error) error { return dbError(err) }

// ApplyProviders is applyBatch.
func (l localIndex) ApplyProviders(ctx context.Context, recs []indexapi.Announcement) (indexapi.AnnounceReply, error) {
	return l.h.applyBatch(ctx, recs)
}

// InvalidateName is invalidateName.
func (l localIndex) InvalidateName(name string) { l.h.invalidateName(name) }

// InvalidateObjects is invalidateObjects.
func (l localIndex) InvalidateObjects(recs []indexapi.Announcement) { l.h.invalidateObjects(recs) }

// NameWritten counts one name write in ron_index_writes_total.
func (l localIndex) NameWritten(err error) { l.h.countWrite(writeName, err, 1) }

// clusterWrite validates a name write and runs it through the name's
// primary (replication.Node.Write); an invalid write counts as one.
func (h *Handlers) clusterWrite(ctx context.Context, w replication.NameWrite, forwarded bool, corrID string) replication.Outcome {
	if err := checkNameWrite(w); err != nil {
		h.countWrite(writeName, err, 1)
		return replication.Outcome{Err: err}
	}
	return h.cl.rep.Write(ctx, w, forwarded, corrID)
}

// checkNameWrite validates a write before anything is forwarded or stored.
func checkNameWrite(w replication.NameWrite) error {
	if err := indexapi.CheckName(w.Name); err != nil {
		return err
	}
	return checkCond(w.Cond, !w.Delete)
}

// clusterAnnounce validates a whole provider batch, then sends each record
// to its owners (replication.Node.Announce).
func (h *Handlers) clusterAnnounce(ctx context.Context, recs []indexapi.Announcement) (indexapi.AnnounceReply, error) {
	if err := indexapi.CheckWholeSeconds(recs); err != nil {
		return indexapi.AnnounceReply{}, err
	}
	if err := h.db.ValidateAnnounce(recs); err != nil {
		return indexapi.AnnounceReply{}, announceError(err, false)
	}
	return h.cl.rep.Announce(ctx, recs)
}

// clusterPutName is PUT /names/{name} in cluster mode.
func (h *Handlers) clusterPutName(c echo.Context) error {
	if err := h.authorize(c, indexapi.ScopeWrite); err != nil {
		return err
	}
	name, target, cond, err := putRequest(c)
	if err != nil {
		h.countWrite(writeName, err, 1)
		return err
	}
	rec, err := h.clusterWriteHTTP(c, replication.NameWrite{Name: name, Target: target, Cond: cond})
	if rec == nil {
		return err
	}
	c.Response().Header().Set("ETag", etag(rec.Version))
	return writeJSON(c, http.StatusOK, toRecordOut(*rec))
}

// clusterDeleteName is DELETE /names/{name} in cluster mode.
func (h *Handlers) clusterDeleteName(c echo.Context) error {
	name, cond, err := h.deleteRequest(c)
	if err != nil {
		return err
	}
	rec, err := h.clusterWriteHTTP(c, replication.NameWrite{Name: name, Delete: true, Cond: cond})
	if rec == nil {
		return err
	}
	return writeJSON(c, http.StatusOK, deletionOf(*rec))
}

// clusterWriteHTTP runs a name write of an HTTP request through the
// primary: the written record, or nil with the error to return (nil when
// the primary's own answer was relayed to the client).
func (h *Handlers) clusterWriteHTTP(c echo.Context, w replication.NameWrite) (*indexdb.Record, error) {
	out := h.clusterWrite(c.Request().Context(), w, h.trustedForward(c), httpx.CorrID(c))
	switch {
	case out.Relay != nil:
		return nil, out.Relay.Write(c.Response())
	case out.Err != nil:
		return nil, out.Err
	}
	return &out.Rec, nil
}

// trustedForward reports whether c carries X-Ron-Forwarded with a token
// allowing indexapi.ScopeReplicate; otherwise the header is ignored (docs/cluster.md
// §2).
func (h *Handlers) trustedForward(c echo.Context) bool {
	if c.Request().Header.Get(replication.HeaderForwarded) == "" {
		return false
	}
	_, err := auth.Check(h.keys, c.Request(), indexapi.ScopeReplicate, h.now())
	return err == nil
}

// peerHistory asks the other index members for name's kept versions
// within one lookup budget: none anywhere is 404.
func (h *Handlers) peerHistory(ctx context.Context, name string) (indexapi.NameHistory, error) {
	ctx, cancel := resolveOpts{set: h.settings()}.withBudget(ctx)
	defer cancel()
	out, err := h.cl.peers.History(ctx, name)
	if err == nil {
		return out, nil
	}
	if notFound, perr := peerError(err); !notFound {
		return indexapi.NameHistory{}, perr
	}
	return indexapi.NameHistory{}, httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "not found")
}

// replicaNamesReply answers POST /replica/names: how many records were
// received and how many became current.
type replicaNamesReply struct {
	Received int `json:"received"`
	Current  int `json:"current"`
}

// replicaNames is POST /replica/names (indexapi.ScopeReplicate; docs/cluster.md
// §6): up to 1000 records {name, version, b3|null, deleted, updated_at},
// validated as a whole, applied in one transaction with the replica rule
// (indexdb.ApplyReplica). A bad body is 400 with details.index and
// details.field.
func (h *Handlers) replicaNames(c echo.Context) error {
	body, err := readJSONBody(c)
	if err != nil {
		return err
	}
	recs, err := indexdb.DecodeReplicaNames(body)
	if err != nil {
		return announceError(err, true)
	}
	n, err := h.db.ApplyReplica(c.Request().Context(), recs)
	if err != nil {
		return announceError(err, false)
	}
	for _, rec := range recs {
		h.invalidateName(rec.Name)
	}
	return writeJSON(c, http.StatusOK, replicaNamesReply{Received: len(recs), Current: n})
}

// replicaProviders is POST /replica/providers (indexapi.ScopeReplicate): a POST
// /providers body sent by the node that received the batch, stored here
// as it is (never forwarded again, whoever owns the records).
func (h *Handlers) replicaProviders(c echo.Context) error {
	recs, err := h.readAnnounce(c)
	if err != nil {
		return err
	}
	res, err := h.applyBatch(c.Request().Context(), recs)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, res)
}
