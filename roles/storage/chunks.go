package storage

// The engine's verified reads that the cluster-mode packages run on:
// replica copies read whole objects (replicate.Options.Open), repair
// pushes and rechecks read chunk by chunk (repairlink.Options.OpenChunks).

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/ronhq/ron/roles/storage/repairlink"
	"github.com/ronhq/ron/store"
)

// openVerified opens id for a verified read straight from the engine (the
// replica copy of a write, which already holds a PUT slot); errors are
// answers (storeError).
func (r *Role) openVerified(ctx context.Context, id store.ID) (io.ReadCloser, store.Info, error) {
	obj, err := r.engine.Open(ctx, id)
	if err != nil {
		return nil, store.Info{}, storeError(err)
	}
	info := obj.Info()
	return &objectReader{ctx: ctx, cr: newChunkReader(obj, r.metrics.chunksVerified()), end: info.Size,
		done: func() { _ = obj.Close() }}, info, nil
}

// openChunks opens id for the chunk-by-chunk verified read of repair
// pushes and rechecks; errors are the engine's.
func (r *Role) openChunks(ctx context.Context, id store.ID) (repairlink.Chunks, store.Info, error) {
	obj, err := r.engine.Open(ctx, id)
	if err != nil {
		return nil, store.Info{}, err
	}
	return newLocalChunks(r, obj), obj.Info(), nil
}

// localChunks is repairlink.Chunks over an open object: each chunk is
// read whole and verified against its sidecar digest. Next's chunk is a view
// of a pooled buffer that Close gives back, so a push wraps its reader in a
// peer.ReplicaBody (Close only once no read runs); Close and Next also
// exclude each other and Next fails once closed.
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

// Next returns the next verified chunk, io.EOF after the last.
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

// Close releases the chunk buffer and the object; it is idempotent.
func (l *localChunks) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		l.cr.release()
		_ = l.obj.Close()
	}
}
