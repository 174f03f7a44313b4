package index

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/store"
)

// Cluster-only routes (docs/cluster.md §6).
const (
	pathReplicaNames     = "/replica/names"
	pathReplicaProviders = "/replica/providers"
)

// nameWrite is one PUT (target set) or DELETE (del) of a name under cond.
type nameWrite struct {
	name   string
	target store.ID
	del    bool
	cond   indexapi.Cond
}

// check validates the write before anything is forwarded or stored.
func (w nameWrite) check() error {
	if err := indexapi.CheckName(w.name); err != nil {
		return err
	}
	return checkCond(w.cond, !w.del)
}

// writeOutcome is the result of a cluster name write: this node's own
// (rec or err), or the primary's raw answer (relay).
type writeOutcome struct {
	rec   indexdb.Record
	err   error
	relay *relayed
}

// result returns the written record or the error, decoding a relayed
// answer.
func (o writeOutcome) result() (indexdb.Record, error) {
	if o.relay != nil {
		return o.relay.result()
	}
	return o.rec, o.err
}

// clusterWrite runs a name write in cluster mode (docs/cluster.md §6): it
// is validated here, then applied as primary when this node is the name's
// first alive owner or the request was forwarded by another node (a
// forwarded write is never forwarded again), else forwarded to the primary
// whose answer is relayed.
func (h *Handlers) clusterWrite(ctx context.Context, w nameWrite, forwarded bool, corrID string) writeOutcome {
	if err := w.check(); err != nil {
		h.countWrite(writeName, err, 1)
		return writeOutcome{err: err}
	}
	own := h.cl.ownership()
	primary, ok := own.primary(nameKey(w.name))
	switch {
	case forwarded || (ok && primary.ID == own.self()):
		return h.primaryWrite(ctx, w, own)
	case !ok:
		return writeOutcome{err: errNoOwners()}
	}
	out := h.forwardWrite(ctx, primary, w, corrID)
	h.invalidateName(w.name)
	return out
}

// primaryWrite applies a write as the name's primary: refuse at once when
// fewer than W_idx owners are alive, commit locally under the name's lock,
// then replicate to the other owners and succeed once W_idx copies (this
// one included) are durable, else 503 (the outcome is then unknown).
func (h *Handlers) primaryWrite(ctx context.Context, w nameWrite, own ownership) writeOutcome {
	need := own.wIdx()
	others := withoutID(own.owners(nameKey(w.name)), own.self())
	if len(others)+1 < need {
		h.cl.ownerWrites(ownerName, resultFailed, 1)
		return writeOutcome{err: errCopies(0, need)}
	}
	rec, err := h.commitName(ctx, w)
	h.countWrite(writeName, err, 1)
	if err != nil {
		return writeOutcome{err: err}
	}
	copies := 1 + h.replicateNames(ctx, others, []indexdb.Record{rec})
	if copies < need {
		h.cl.ownerWrites(ownerName, resultFailed, 1)
		return writeOutcome{err: errCopies(copies, need)}
	}
	h.cl.ownerWrites(ownerName, resultOK, 1)
	return writeOutcome{rec: rec}
}

// commitName runs the write's local transaction under the name's lock.
func (h *Handlers) commitName(ctx context.Context, w nameWrite) (indexdb.Record, error) {
	unlock := h.cl.locks.lock(w.name)
	var (
		rec indexdb.Record
		err error
	)
	if w.del {
		rec, err = h.db.Delete(ctx, w.name, w.cond)
	} else {
		rec, err = h.db.Set(ctx, w.name, w.target, w.cond)
	}
	unlock()
	if err != nil {
		return indexdb.Record{}, dbError(err)
	}
	h.invalidateName(w.name)
	return rec, nil
}

// invalidateName drops the cached answers of name.
func (h *Handlers) invalidateName(name string) {
	if c := h.settings().Cache; c != nil {
		c.InvalidateName(name)
	}
}

// replicateNames sends recs to every member of to (POST /replica/names,
// concurrently, each under replicaTimeout even if the client went away)
// and returns how many stored them.
func (h *Handlers) replicateNames(ctx context.Context, to []cluster.Member, recs []indexdb.Record) int {
	if len(to) == 0 {
		return 0
	}
	body, err := indexdb.EncodeReplicaNames(recs)
	if err != nil {
		return 0
	}
	ids, bodies := make([]string, len(to)), make([][]byte, len(to))
	for i, m := range to {
		ids[i], bodies[i] = m.ID, body
	}
	n := 0
	for _, ok := range h.cl.fanOut(context.WithoutCancel(ctx), ids, pathReplicaNames, bodies) {
		if ok {
			n++
		}
	}
	return n
}

// fanOut posts bodies[i] to member ids[i], all at once, and reports which
// calls succeeded. It returns when every call has.
func (cn *clusterNode) fanOut(ctx context.Context, ids []string, path string, bodies [][]byte) []bool {
	ok := make([]bool, len(ids))
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() { // one replica call, joined below
			defer wg.Done()
			ok[i] = cn.peers.post(ctx, ids[i], path, bodies[i]) == nil
		}()
	}
	wg.Wait()
	return ok
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
	rec, err := h.clusterWriteHTTP(c, nameWrite{name: name, target: target, cond: cond})
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
	rec, err := h.clusterWriteHTTP(c, nameWrite{name: name, del: true, cond: cond})
	if rec == nil {
		return err
	}
	return writeJSON(c, http.StatusOK, deletionOf(*rec))
}

// clusterWriteHTTP runs a name write of an HTTP request through the
// primary: the written record, or nil with the error to return (nil when
// the primary's own answer was relayed to the client).
func (h *Handlers) clusterWriteHTTP(c echo.Context, w nameWrite) (*indexdb.Record, error) {
	out := h.clusterWrite(c.Request().Context(), w, h.trustedForward(c), httpx.CorrID(c))
	switch {
	case out.relay != nil:
		return nil, out.relay.write(c)
	case out.err != nil:
		return nil, out.err
	}
	return &out.rec, nil
}

// deletionOf is the DELETE answer of a tombstone record.
func deletionOf(rec indexdb.Record) indexapi.NameDeletion {
	return indexapi.NameDeletion{Name: rec.Name, Version: rec.Version, Deleted: true, UpdatedAt: stamp(rec.UpdatedAt)}
}

// nameOfKey returns the name of key (a name or "name@version"), 400 when
// malformed.
func nameOfKey(key string) (string, error) {
	if strings.Contains(key, "@") {
		n, _, err := indexapi.ParseNameVersion(key)
		if err != nil {
			return "", dbError(err)
		}
		return n, nil
	}
	if err := indexapi.CheckName(key); err != nil {
		return "", err
	}
	return key, nil
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
