package index

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/roles/index/namelog"
	"github.com/ronhq/ron/roles/index/ownership"
	"github.com/ronhq/ron/roles/index/replication"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/consensus"
)

// clusterMode is the handlers' cluster mode: who owns which provider
// records and the member clients (peers, docs/cluster.md §6), and the
// writes (rep: names through the control-plane log, docs/cluster.md §14;
// provider batches through their owners).
type clusterMode struct {
	peers *ownership.Peers
	rep   *replication.Node
	plane *consensus.Plane
}

// enableCluster switches h to cluster mode over peers and the names log of
// plane (before Mount): name writes go through the log, provider batches
// to their owners, provider reads prefer owners, and Mount adds the
// /replica/providers route. It returns the names log's state machine over
// h's database (fatal stops the node when the database fails), which the
// plane must hand the names entries to.
func (h *Handlers) enableCluster(peers *ownership.Peers, plane *consensus.Plane, fatal func(error), m *runtime.Metrics) *namelog.FSM {
	fsm := namelog.NewFSM(h.db, fatal)
	fsm.OnApplied(h.nameApplied)
	names := namelog.Writer{Plane: plane, Keep: func() int { return h.db.Limits().HistoryLen }}
	rep := replication.New(replication.Options{Peers: peers, Names: names, Local: localIndex{h}, Metrics: m})
	h.cl = &clusterMode{peers: peers, rep: rep, plane: plane}
	return fsm
}

// nameApplied drops the cached answers of a name the log wrote here (every
// cached answer after a snapshot restore, rec zero).
func (h *Handlers) nameApplied(rec indexdb.Record) {
	c := h.settings().Cache
	switch {
	case c == nil:
	case rec.Name == "":
		c.Purge()
	default:
		c.InvalidateName(rec.Name)
	}
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

// clusterWrite validates a name write and runs it through the log
// (replication.Node.Write); an invalid write counts as one.
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

// clusterWriteHTTP runs a name write of an HTTP request through the log:
// the written record, or nil with the error to return (nil when the
// leader's own answer was relayed to the client).
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

// replicaNamesReply answers POST /replica/names: how many records were
// received and how many became current.
type replicaNamesReply struct {
	Received int `json:"received"`
	Current  int `json:"current"`
}

// replicaNames is POST /replica/names (indexapi.ScopeReplicate;
// docs/cluster.md §14): names another node held before it joined the
// control plane, 1–1000 records {name, version, b3|null, deleted,
// updated_at} validated as a whole (400 with details.index and
// details.field), appended to the log as one import entry on the leader
// (elsewhere 503 no_quorum).
func (h *Handlers) replicaNames(c echo.Context) error {
	body, err := readJSONBody(c)
	if err != nil {
		return err
	}
	recs, err := indexdb.DecodeReplicaNames(body)
	if err != nil {
		return announceError(err, true)
	}
	n, err := h.cl.rep.Import(c.Request().Context(), recs)
	if err != nil {
		return err
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

// nameRead prepares a name read in cluster mode: it sets the freshness
// headers and, for ?consistent=1, makes the read linearizable — on the
// leader a barrier first (every write acknowledged before is applied
// here), elsewhere the read is forwarded to the leader and its answer
// relayed (relayed true: the response is written). Outside cluster mode it
// does nothing.
func (h *Handlers) nameRead(c echo.Context) (relayed bool, err error) {
	if h.cl == nil {
		return false, nil
	}
	if c.QueryParam("consistent") == "1" {
		if relayed, err := h.consistentRead(c); relayed || err != nil {
			return relayed, err
		}
	}
	f := h.cl.plane.Freshness()
	hd := c.Response().Header()
	hd.Set(indexapi.HeaderAppliedIndex, strconv.FormatUint(f.Applied, 10))
	hd.Set(indexapi.HeaderKnownLeader, strconv.FormatBool(f.KnownLeader))
	hd.Set(indexapi.HeaderLastContact, strconv.FormatInt(f.LastContact.Milliseconds(), 10))
	return false, nil
}

// consistentRead runs the barrier on the leader or forwards the read to
// it; a forwarded read that meets a node that is not the leader, or a
// group without one, is 503 no_quorum.
func (h *Handlers) consistentRead(c echo.Context) (relayed bool, err error) {
	ctx := c.Request().Context()
	err = h.cl.plane.Barrier(ctx)
	var nl *consensus.NotLeaderError
	if errors.As(err, &nl) && !h.trustedForward(c) {
		out := h.cl.rep.ForwardRead(ctx, nl.LeaderID, c.Request().URL, httpx.CorrID(c))
		if out.Relay != nil {
			return true, out.Relay.Write(c.Response())
		}
		return false, out.Err
	}
	if err != nil {
		return false, h.cl.rep.LogError(err)
	}
	return false, nil
}
