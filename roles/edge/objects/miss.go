package objects

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/roles/edge/httpcache"
	"github.com/ronhq/ron/store"
)

// getMiss answers a GET that missed: it joins the fill of id, or starts it
// (the leader) as a job on the work queue, and waits within its own
// deadline for the outcome: the growing entry (read as it fills), the
// failure, or "too large to store" (the leader gets the stream of the fill
// job; the others stream on their own).
func (o *Objects) getMiss(c echo.Context, id store.ID) error {
	req := c.Request()
	ctx := req.Context()
	deadline, _ := ctx.Deadline()
	fl, leader := o.join(id, deadline)
	var t *target
	if leader {
		t = newTarget(req)
		defer t.close()
		if err := o.opt.Queue.Submit(o.fillJob(fl, t)); err != nil {
			o.leave(fl)
			herr := o.refused(err)
			fl.fail(herr)
			return herr
		}
	} else {
		o.met.coalesced.Inc()
	}
	select {
	case <-fl.ready:
	case <-ctx.Done():
		return ctxError(ctx)
	}
	switch {
	case fl.err != nil:
		return fl.err
	case fl.fill != nil:
		return o.serveFill(c, fl, !leader)
	case leader:
		return o.serveTarget(c, id, t)
	}
	return o.streamOwn(c, id)
}

// refused maps a Submit refusal to its answer, counting a full queue.
func (o *Objects) refused(err error) error {
	if errors.Is(err, fillq.ErrBusy) {
		o.met.busy()
	}
	return submitError(err)
}

// serveFill answers from the growing entry of fl: the headers go out once
// the answer's first byte is in (and the size is proven when the answer
// states it before the fill verified the last group), its bytes as they
// arrive.
func (o *Objects) serveFill(c echo.Context, fl *flight, collapsed bool) error {
	ctx := c.Request().Context()
	f := fl.fill.Follow()
	defer f.Close()
	cs := httpcache.CacheStatus{Fwd: httpcache.FwdMiss, FwdStatus: http.StatusOK, Stored: true, Collapsed: collapsed}
	return o.respond(c, answer{id: fl.id, size: fl.size, ctype: fl.ctype, cacheStatus: cs.String(),
		wait: followerWait(ctx, f), read: followerRead(ctx, f),
		prove: func(plan ranges.Plan) error { return o.proveFill(ctx, fl, plan) }})
}

// followerWait blocks until byte off of the fill exists.
func followerWait(ctx context.Context, f *edgecache.Follower) func(off int64) error {
	return func(off int64) error {
		var one [1]byte
		_, err := f.ReadAt(ctx, one[:], off)
		if err == io.EOF {
			err = nil
		}
		return err
	}
}

// followerRead copies ranges of the fill, waiting for bytes still to come.
func followerRead(ctx context.Context, f *edgecache.Follower) func(w io.Writer, off, n int64) error {
	return func(w io.Writer, off, n int64) error {
		buf := getBuf()
		defer putBuf(buf)
		for n > 0 {
			k, err := f.ReadAt(ctx, buf[:min(n, int64(len(buf)))], off)
			if k > 0 {
				if _, werr := w.Write(buf[:k]); werr != nil {
					return werr
				}
				off, n = off+int64(k), n-int64(k)
			}
			switch {
			case err == io.EOF && n > 0:
				return io.ErrUnexpectedEOF
			case err != nil && err != io.EOF:
				return err
			}
		}
		return nil
	}
}
