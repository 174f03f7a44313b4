package objects

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/roles/edge/httpcache"
	"github.com/ronhq/ron/store"
)

// headResult is what a source's HEAD said, or why none answered.
type headResult struct {
	size  int64
	ctype string
	err   error
}

// headMiss answers a HEAD that missed from the sources' HEAD answers (a
// job on the work queue); nothing is filled.
func (o *Objects) headMiss(c echo.Context, id store.ID) error {
	ctx := c.Request().Context()
	deadline, _ := ctx.Deadline()
	lim := o.limits()
	res := make(chan headResult, 1)
	err := o.opt.Queue.Submit(fillq.Job{Kind: "fill", Deadline: deadline,
		Run:     func(jctx context.Context) { res <- o.runHead(jctx, ctx, id, lim) },
		Dropped: func(err error) { res <- headResult{err: submitError(err)} }})
	if err != nil {
		return o.refused(err)
	}
	var r headResult
	select {
	case r = <-res:
	case <-ctx.Done():
		return ctxError(ctx)
	}
	if r.err != nil {
		return r.err
	}
	cs := httpcache.CacheStatus{Fwd: httpcache.FwdMiss, FwdStatus: http.StatusOK}
	return o.respond(c, answer{id: id, size: r.size, ctype: r.ctype, cacheStatus: cs.String()})
}

// runHead asks the sources in order until one answers 200 with a
// Content-Length; it ends early when the client leaves.
func (o *Objects) runHead(ctx, client context.Context, id store.ID, lim Limits) headResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(client, cancel)()
	var r headResult
	deadline := func() time.Time { d, _ := client.Deadline(); return d }
	r.err = o.trySources(ctx, id, lim, deadline, func(ctx context.Context, src *Source) (bool, error) {
		size, ctype, err := o.req(src, lim.FillTimeout).Head(ctx, src.BaseURL, id)
		if err != nil {
			return false, err
		}
		r.size, r.ctype = size, ctype
		return true, nil
	})
	return r
}
