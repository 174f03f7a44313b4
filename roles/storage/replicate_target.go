package storage

import (
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/storage/peer"
	"github.com/ronhq/ron/roles/storage/storageapi"
)

// replicaWrite reports whether a write's X-Ron-Replica: 1 is honoured
// (docs/cluster.md §2, §4 step 6): only in cluster mode and only with a
// token allowing storage:replicate (the node token, or admin). Otherwise the
// header is ignored and the write is an ordinary one; a token that fails
// this check is not counted as an auth failure (the write's own scope
// already passed).
func (r *Role) replicaWrite(c echo.Context) bool {
	req := c.Request()
	if r.opt.Cluster == nil || strings.TrimSpace(req.Header.Get(peer.HeaderReplica)) != "1" {
		return false
	}
	_, err := auth.Check(r.opt.Keys, req, storageapi.ScopeReplicate, time.Now())
	return err == nil
}
