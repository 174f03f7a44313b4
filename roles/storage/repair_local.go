package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/ronhq/ron/roles/storage/announcing"
	"github.com/ronhq/ron/roles/storage/peer"
	"github.com/ronhq/ron/roles/storage/repair"
	"github.com/ronhq/ron/store"
)

// Reasons of failed repair transfers that are this node's side.
const (
	reasonLocal  = "local"  // the local copy could not be read (gone, quarantined, corrupt)
	reasonSource = "source" // no holder sent the object (pull)
	reasonCommit = "commit" // the pulled object could not be stored
)

// repairLocal is repair.Local over the engine.
type repairLocal struct{ r *Role }

func (l repairLocal) List(ctx context.Context, after *store.ID, limit int) ([]store.Info, error) {
	return l.r.engine.List(ctx, after, limit)
}

func (l repairLocal) Stat(ctx context.Context, id store.ID) (store.Info, error) {
	return l.r.engine.Stat(ctx, id)
}

func (l repairLocal) Count() int64 { return l.r.engine.Stats().Objects }

// repairRemote is repair.Remote over the peer client.
type repairRemote struct{ r *Role }

func (x repairRemote) Has(ctx context.Context, base string, ids []store.ID) (map[store.ID]bool, error) {
	return x.r.peers().Has(ctx, base, ids)
}

// repairExec is repair.Executor over the engine, the peer client and the
// verified transfer.
type repairExec struct{ r *Role }

// Drop deletes an excess copy and withdraws its provider record, as DELETE
// /o/{b3} does.
func (x repairExec) Drop(ctx context.Context, id store.ID) error {
	if err := x.r.engine.Delete(ctx, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	x.r.announce.enqueue(announcing.Record{ID: id, TTL: 0})
	return nil
}

// localChunks is repair.ChunkSource over an open object: each chunk is
// read whole and verified against its sidecar digest. Next's chunk is a view
// of a pooled buffer that close gives back, so a push wraps its reader in a
// replicaBody (close only once no read runs); close and Next also exclude
// each other and Next fails once closed.
type localChunks struct {
	mu     sync.Mutex
	cr     *chunkReader
	obj    store.Object
	next   int
	count  int
	closed bool
}

func newLocalChunks(r *Role, obj store.Object) *localChunks {
	return &localChunks{cr: newChunkReader(obj, r.metrics.chunksVerified()), obj: obj, count: obj.Info().Chunks}
}

var errChunksClosed = errors.New("storage: local copy closed")

func (l *localChunks) Next() ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return nil, errChunksClosed
	case l.next >= l.count:
		return nil, io.EOF
	}
	if err := l.cr.load(l.next); err != nil {
		return nil, err
	}
	l.next++
	return l.cr.data, nil
}

func (l *localChunks) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		l.cr.release()
		_ = l.obj.Close()
	}
}

// Push streams the local verified copy into base's PUT /o/{b3} as a
// replica, paced by m. A 409 from the target re-hashes the local copy
// whole and quarantines it when it is wrong.
func (x repairExec) Push(ctx context.Context, id store.ID, base string, m repair.Meter) (bool, error) {
	obj, err := x.r.engine.Open(ctx, id)
	if err != nil {
		return false, repair.Fail(reasonLocal, err)
	}
	info := obj.Info()
	// The transport may still read the body after PutReplica returned: the
	// body releases the object only once that late read is over, and rctx
	// ends a late read that waits for pacing tokens.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	src := newLocalChunks(x.r, obj)
	body := newReplicaBody(m.Reader(rctx, info.Size, src), src.close)
	defer body.Close()
	existing, err := x.r.peers().PutReplica(ctx, base, id, info.Size, info.ContentType, body)
	if err == nil {
		return existing, nil
	}
	var se *peer.SourceError
	if errors.As(err, &se) {
		return false, repair.Fail(reasonLocal, se.Err)
	}
	reason := peer.ReasonOf(err)
	if reason == peer.ReasonHashMismatch {
		cancel()
		_ = body.Close()
		x.r.recheck(ctx, id)
	}
	return false, repair.Fail(reason, err)
}

// recheck hashes the local copy of id whole after a target rejected it
// (409): a chunk that fails its digest quarantines it in the engine; a
// whole digest other than id quarantines it here. Either way the provider
// record is withdrawn and an urgent pull is queued (onCorrupt).
func (r *Role) recheck(ctx context.Context, id store.ID) {
	obj, err := r.engine.Open(ctx, id)
	if err != nil {
		return
	}
	src := newLocalChunks(r, obj)
	defer src.close()
	h := store.NewHasher()
	for {
		chunk, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return // a corrupt chunk: the engine quarantined the object and called onCorrupt
		}
		_, _ = h.Write(chunk)
	}
	if got := h.ID(); got != id {
		src.close()
		if err := r.engine.Quarantine(ctx, id, fmt.Sprintf("repair: whole digest is %s", got.Prefix())); err == nil {
			r.onCorrupt(id, -1, store.KindData)
		}
	}
}
