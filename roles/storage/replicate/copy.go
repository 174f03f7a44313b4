package replicate

import (
	"context"
	"errors"

	"github.com/ronhq/ron/roles/storage/peer"
	"github.com/ronhq/ron/store"
)

// localCopyError marks a copy that failed on this node's side: the object
// could not be opened or a chunk failed verification (then it is
// quarantined). err is the answer for the client (Options.Open's form).
type localCopyError struct{ err error }

func (e *localCopyError) Error() string { return "reading the local copy: " + e.err.Error() }
func (e *localCopyError) Unwrap() error { return e.err }

// isLocalCopyError reports a *localCopyError in err's chain.
func isLocalCopyError(err error) bool {
	var le *localCopyError
	return errors.As(err, &le)
}

// copyTo streams the local verified copy of id into base's PUT /o/{id} with
// X-Ron-Replica (peer.Client.PutReplica). existing: base already held id.
// Target failures are *peer.PutError; local ones *localCopyError. The object
// is opened straight from the engine: the write already holds a PUT slot.
// It is released only once the transport stopped reading it
// (peer.ReplicaBody).
func (x *Replicator) copyTo(ctx context.Context, base string, id store.ID) (existing bool, err error) {
	rd, info, err := x.opt.Open(ctx, id)
	if err != nil {
		return false, &localCopyError{err}
	}
	body := peer.NewReplicaBody(rd, func() { _ = rd.Close() })
	defer body.Close()
	existing, err = x.opt.Peers.PutReplica(ctx, base, id, info.Size, info.ContentType, body)
	var se *peer.SourceError
	if errors.As(err, &se) {
		return false, &localCopyError{se.Err}
	}
	return existing, err
}
