package index

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/roles/index/indexdb"
)

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
