package live

import (
	"context"
	"errors"
	"io"

	"github.com/ronhq/ron/roles/edge/edgecache"
)

// source is a stored body being served: a committed blob, or a fill
// followed while it grows.
type source interface {
	// readAt reads at least one byte at off (waiting for a growing fill),
	// or fails; io.EOF only at or past the end.
	readAt(ctx context.Context, p []byte, off int64) (int, error)
	// size is the body length (a growing fill of unknown length waits for
	// its commit).
	size(ctx context.Context) (int64, error)
	// growing: flush each chunk so clients see the bytes as they arrive.
	growing() bool
	close()
}

// blobSource serves a committed blob.
type blobSource struct{ b edgecache.Blob }

func (s blobSource) readAt(_ context.Context, p []byte, off int64) (int, error) {
	n, err := s.b.ReadAt(p, off)
	if n > 0 && errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

func (s blobSource) size(context.Context) (int64, error) { return s.b.Size(), nil }
func (s blobSource) growing() bool                       { return false }
func (s blobSource) close()                              { _ = s.b.Close() }

// followerSource serves a fill as it grows.
type followerSource struct{ f *edgecache.Follower }

func (s followerSource) readAt(ctx context.Context, p []byte, off int64) (int, error) {
	n, err := s.f.ReadAt(ctx, p, off)
	if n > 0 && errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

func (s followerSource) size(ctx context.Context) (int64, error) { return s.f.Size(ctx) }
func (s followerSource) growing() bool                           { return true }
func (s followerSource) close()                                  { s.f.Close() }

// errNotServed: the body could not be served and nothing was written.
type errNotServed struct{ err error }

func (e errNotServed) Error() string { return "live: body not served: " + e.err.Error() }
func (e errNotServed) Unwrap() error { return e.err }

// errSourceFailed: the stored body failed after the response started.
type errSourceFailed struct{ err error }

func (e errSourceFailed) Error() string { return "live: body source failed: " + e.err.Error() }
func (e errSourceFailed) Unwrap() error { return e.err }

// growing reads a fill from the start as it grows. For the leader of a
// fill of unknown length it switches, when the fill overflows the store
// limit, to the hand-off: the prefix from the fill, then the origin's
// remaining body.
type growing struct {
	ctx     context.Context // the client's
	rctx    context.Context // ctx, also ended by the overflow wake-up
	fol     *edgecache.Follower
	f       *flight
	off     int64
	h       *handoff
	dropped bool // the overflowed fill was aborted
}

func (g *growing) Read(p []byte) (int, error) {
	if g.h != nil {
		return g.readHandoff(p)
	}
	n, err := g.fol.ReadAt(g.rctx, p, g.off)
	g.off += int64(n)
	if err != nil && g.ctx.Err() == nil && errors.Is(context.Cause(g.rctx), errOverflow) {
		if g.h = g.f.claimOverflow(); g.h == nil {
			return n, errOverflow
		}
		if n > 0 {
			return n, nil
		}
		return g.readHandoff(p)
	}
	return n, err
}

// readHandoff reads the rest of the prefix from the fill, then the
// pending bytes, then the origin's body.
func (g *growing) readHandoff(p []byte) (int, error) {
	h := g.h
	if g.off < h.prefix {
		n, err := g.fol.ReadAt(g.ctx, p[:min(int64(len(p)), h.prefix-g.off)], g.off)
		g.off += int64(n)
		return n, err
	}
	if !g.dropped {
		g.dropped = true
		h.fill.Abort(errOverflow)
	}
	if len(h.pending) > 0 {
		n := copy(p, h.pending)
		h.pending = h.pending[n:]
		return n, nil
	}
	return h.u.body.Read(p)
}

// close releases the hand-off (the fill is dropped, the origin closed).
func (g *growing) close() {
	if g.h == nil {
		return
	}
	if !g.dropped {
		g.h.fill.Abort(errOverflow)
	}
	g.h.u.Close()
}
