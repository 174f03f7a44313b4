package replicate

import (
	"net/http"
	"strings"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/storage/peer"
	"github.com/ronhq/ron/roles/storage/storageapi"
)

// IsReplicaWrite reports whether a write's X-Ron-Replica: 1 is honoured
// (docs/cluster.md §2, §4 step 6) by a node in cluster mode: only with a
// token of keys allowing storage:replicate (the node token, or admin).
// Otherwise the header is ignored and the write is an ordinary one; a
// token that fails this check is not counted as an auth failure (the
// write's own scope already passed).
func IsReplicaWrite(req *http.Request, keys *auth.Keyring) bool {
	if strings.TrimSpace(req.Header.Get(peer.HeaderReplica)) != "1" {
		return false
	}
	_, err := auth.Check(keys, req, storageapi.ScopeReplicate, time.Now())
	return err == nil
}
