package objects

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
	"github.com/ronhq/ron/store/verified/vfetch"
)

// errBig: the object is above the store limit; the fill turns into streams.
var errBig = errors.New("objects: object above the store limit")

// fillJob is the work-queue job of fl. t is the leader's stream target,
// used when the object is too large to store.
func (o *Objects) fillJob(fl *flight, t *target) fillq.Job {
	lim := o.limits()
	return fillq.Job{Kind: "fill", Deadline: fl.retryDeadline(),
		Run: func(ctx context.Context) { o.runFill(ctx, fl, t, lim) },
		Dropped: func(err error) {
			o.leave(fl)
			fl.fail(submitError(err))
		}}
}

// runFill fills fl from the sources. Whatever happens, fl leaves the map
// and its waiters learn the outcome; a large object is then streamed to the
// leader when it is still there.
func (o *Objects) runFill(ctx context.Context, fl *flight, t *target, lim Limits) {
	fl.start = time.Now()
	err := o.trySources(ctx, fl.id, lim, fl.retryDeadline, o.fillAttempt(fl, lim))
	o.leave(fl)
	if errors.Is(err, errBig) {
		fl.publishBig()
		if t.ctx.Err() == nil {
			o.runStream(ctx, t, fl.id, lim)
		}
		return
	}
	o.fillDone(fl, err)
	fl.fail(err) // a no-op when the fill was published
}

// fillDone counts the fill's outcome once, before any client can learn it.
func (o *Objects) fillDone(fl *flight, err error) {
	if !fl.counted {
		fl.counted = true
		o.met.fill(fillResult(err, resultStored), fl.start)
	}
}

// fillResult is the ron_edge_fills_total result of a job's outcome.
func fillResult(err error, success string) string {
	var he *httpx.Error
	switch {
	case err == nil:
		return success
	case errors.As(err, &he) && he.Details["reason"] == ReasonEtagInvalid:
		return resultMismatch
	case errors.As(err, &he) && he.Status == http.StatusGatewayTimeout:
		return resultTimeout
	}
	return resultError
}

// storeLimit is the largest object stored (fill_max_bytes, and 1/16 of
// the budget in memory).
func (o *Objects) storeLimit(lim Limits) int64 { return o.opt.Cache.StoreLimit(lim.FillMaxBytes) }

// fillAttempt is one attempt at filling fl from a source: the outboard
// and the size it states first (too large → errBig), then the body; once
// its first group verified, the fill is published to the waiters and
// nothing else is tried.
func (o *Objects) fillAttempt(fl *flight, lim Limits) attemptFunc {
	return func(ctx context.Context, src *Source) (bool, error) {
		p, err := o.probe(ctx, src, fl.id, lim.FillTimeout)
		if err != nil {
			return false, err
		}
		if p.size() > o.storeLimit(lim) {
			if p.size() <= lim.FillMaxBytes {
				o.met.amnesia.Inc()
			}
			return true, errBig
		}
		b, err := p.whole(ctx)
		if err != nil {
			return false, err
		}
		defer b.Close()
		first, err := b.Next()
		if err != nil && err != io.EOF {
			return false, err
		}
		f, err := o.opt.Cache.NewProvenFill(p.size()) // every group is proven before it is written
		if err != nil {
			return true, errCache(err)
		}
		return true, o.fillFrom(ctx, fl, f, src, p, b, first)
	}
}

// fillFrom writes the first verified group, publishes the fill, writes the
// rest and commits it. A failure aborts the fill: its followers get the
// error, and those that sent headers abort their connections.
func (o *Objects) fillFrom(ctx context.Context, fl *flight, f *edgecache.Fill, src *Source, p *probe, b *vfetch.Body, first []byte) error {
	err := o.write(f, first)
	if err == nil {
		fl.publish(f, src, p, b.ContentType)
	}
	for err == nil {
		var group []byte
		if group, err = b.Next(); err == nil {
			err = o.write(f, group)
		}
	}
	if err == io.EOF {
		err = f.CommitObject(fl.id, b.ContentType)
		if err == nil {
			o.fillDone(fl, nil)
			return nil
		}
		o.opt.Log.Warn().Err(err).Str("b3_prefix", fl.id.Prefix()).Msg("storing a filled object failed")
	}
	herr := o.afterBytes(ctx, src, fl.id, err)
	o.leave(fl)
	o.fillDone(fl, herr)
	f.Abort(herr)
	fl.fail(herr) // when the first write failed, nothing was published
	return herr
}

// write adds a verified group to the fill.
func (o *Objects) write(f *edgecache.Fill, group []byte) error {
	if len(group) == 0 {
		return nil
	}
	_, err := f.Write(group)
	o.met.upstream.Add(len(group))
	return err
}

// afterBytes maps a failure of src after which no other source is tried
// (bytes may have reached a client, or the fill's size failed its proof): a
// hash mismatch (counted) → 502 etag_invalid, a timeout → 504, shutdown →
// 503 draining, anything else → 502.
func (o *Objects) afterBytes(ctx context.Context, src *Source, id store.ID, err error) *httpx.Error {
	switch {
	case errors.Is(err, verified.ErrMismatch), errors.Is(err, edgecache.ErrMismatch):
		o.mismatch(src, id, err)
		return errUnavailable(true)
	case ctx.Err() != nil:
		return errDraining()
	case errors.Is(err, vfetch.ErrTimeout):
		return errTimedOut()
	}
	o.opt.Log.Debug().Err(err).Str("source", src.Name).Str("b3_prefix", id.Prefix()).Msg("object transfer failed")
	return errUnavailable(false)
}
