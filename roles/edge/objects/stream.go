package objects

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/roles/edge/httpcache"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified/vfetch"
)

// errClientGone: the client of a stream left.
var errClientGone = errors.New("objects: the client left")

// target is one request that receives a streamed object (too large to
// store): a job writes the verified bytes into a pipe its handler reads.
// The pipe holds nothing, so a slow client slows only its own job.
type target struct {
	req  *http.Request   // a copy of the method and headers: the job plans from them
	ctx  context.Context // the client's: ends when its handler returns
	head chan streamHead // the answer's head, or the failure; sent once
	sent bool            // head was sent (by the job's goroutine only)
	pr   *io.PipeReader
	pw   *io.PipeWriter
}

// streamHead is a stream's answer before its body.
type streamHead struct {
	plan      ranges.Plan
	size      int64
	ctype     string
	fwdStatus int // the source's status
	err       error
}

func newTarget(r *http.Request) *target {
	pr, pw := io.Pipe()
	return &target{req: &http.Request{Method: r.Method, Header: r.Header.Clone()}, ctx: r.Context(),
		head: make(chan streamHead, 1), pr: pr, pw: pw}
}

// deadline is the client's deadline (zero: none).
func (t *target) deadline() time.Time {
	d, _ := t.ctx.Deadline()
	return d
}

// send hands the handler the head; only the first call counts.
func (t *target) send(h streamHead) {
	if !t.sent {
		t.sent = true
		t.head <- h
	}
}

// fail ends the stream with err: as the head when none was sent, else by
// breaking the pipe (the handler aborts its connection).
func (t *target) fail(err error) {
	t.send(streamHead{err: err})
	t.pw.CloseWithError(err)
}

// close is the handler's end: the job's writes fail from now on.
func (t *target) close() { t.pr.CloseWithError(errClientGone) }

// read copies the next n bytes of the stream to w (off is implied: the
// stream carries exactly the answer's bytes in order).
func (t *target) read(w io.Writer, _, n int64) error {
	got, err := io.CopyN(w, t.pr, n)
	if err == io.EOF && got < n {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// streamOwn answers a GET of an object too large to store with a stream of
// its own (a job not shared with other requests).
func (o *Objects) streamOwn(c echo.Context, id store.ID) error {
	t := newTarget(c.Request())
	defer t.close()
	lim := o.limits()
	err := o.opt.Queue.Submit(fillq.Job{Kind: "fill", Deadline: t.deadline(),
		Run:     func(ctx context.Context) { o.runStream(ctx, t, id, lim) },
		Dropped: func(err error) { t.fail(submitError(err)) }})
	if err != nil {
		return o.refused(err)
	}
	return o.serveTarget(c, id, t)
}

// serveTarget answers from t's stream once its head arrived.
func (o *Objects) serveTarget(c echo.Context, id store.ID, t *target) error {
	ctx := c.Request().Context()
	var h streamHead
	select {
	case h = <-t.head:
	case <-ctx.Done():
		return ctxError(ctx)
	}
	if h.err != nil {
		return h.err
	}
	cs := httpcache.CacheStatus{Fwd: httpcache.FwdMiss, FwdStatus: h.fwdStatus}
	return o.respond(c, answer{id: id, size: h.size, ctype: h.ctype, cacheStatus: cs.String(), plan: &h.plan, read: t.read})
}

// runStream streams id to t from the sources; the job ends when t's client
// leaves.
func (o *Objects) runStream(ctx context.Context, t *target, id store.ID, lim Limits) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(t.ctx, cancel)()
	start := time.Now()
	err := o.trySources(ctx, id, lim, t.deadline, o.streamAttempt(t, id, lim))
	if err != nil {
		t.fail(err)
	}
	if err == nil || t.ctx.Err() == nil && !errors.Is(err, errClientGone) { // else the client left
		o.met.fill(fillResult(err, resultPassed), start)
	}
}

// streamPlan is the answer to a streamed request: its conditionals and
// Range, several ranges becoming 200 full.
func streamPlan(r *http.Request, size int64, id store.ID, maxRanges int) ranges.Plan {
	plan := ranges.NewPlanFor(r, size, validators(id), "", maxRanges)
	if plan.Status == http.StatusPartialContent && len(plan.Ranges) > 1 {
		return ranges.Plan{Status: http.StatusOK, ContentLength: size}
	}
	return plan
}

// streamAttempt is one attempt at streaming id to t from a source: the
// outboard (and the size it states), the plan, the size's proof when the
// answer states it without reading the last group (a 416, a range ending
// before that group), then the whole body or the group-aligned span of the
// one range; the head goes to t once the first group verified.
func (o *Objects) streamAttempt(t *target, id store.ID, lim Limits) attemptFunc {
	return func(ctx context.Context, src *Source) (bool, error) {
		p, err := o.probe(ctx, src, id, lim.FillTimeout)
		if err != nil {
			return false, err
		}
		plan := streamPlan(t.req, p.size(), id, lim.MaxRanges)
		if vfetch.StatesUnproven(plan, p.tree) {
			if err := p.proveSize(ctx); err != nil {
				return false, err
			}
		}
		if (plan.Status != http.StatusOK && plan.Status != http.StatusPartialContent) || plan.ContentLength == 0 {
			t.send(streamHead{plan: plan, size: p.size()})
			t.pw.Close()
			return true, nil
		}
		b, skip, err := openFor(ctx, p, plan)
		if err != nil {
			return false, err
		}
		defer b.Close()
		first, err := b.Next()
		if err != nil {
			return false, err
		}
		t.send(streamHead{plan: plan, size: p.size(), ctype: b.ContentType, fwdStatus: b.Status})
		return true, o.pump(ctx, t, src, id, b, first, skip, plan.ContentLength)
	}
}

// openFor opens what plan needs: the whole body for a 200, the groups
// covering the range of a 206. skip is the number of bytes before the
// answer's first byte in the body opened.
func openFor(ctx context.Context, p *probe, plan ranges.Plan) (*vfetch.Body, int64, error) {
	if plan.Status == http.StatusOK {
		b, err := p.whole(ctx)
		return b, 0, err
	}
	r := plan.Ranges[0]
	first, last := p.tree.GroupRange(r.Start, r.End())
	off, _ := p.tree.Span(first, last)
	b, err := p.span(ctx, first, last)
	return b, r.Start - off, err
}

// pump writes the answer's n bytes, from skip bytes into the body, to t's
// pipe, group by verified group. A failure breaks the pipe.
func (o *Objects) pump(ctx context.Context, t *target, src *Source, id store.ID, b *vfetch.Body, group []byte, skip, n int64) error {
	for {
		part := group[min(skip, int64(len(group))):]
		skip -= int64(len(group)) - int64(len(part))
		part = part[:min(n, int64(len(part)))]
		o.met.upstream.Add(len(group))
		if _, err := t.pw.Write(part); err != nil {
			return errClientGone
		}
		if n -= int64(len(part)); n == 0 {
			t.pw.Close()
			return nil
		}
		var err error
		if group, err = b.Next(); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // cannot happen: the span covers the answer
			}
			herr := o.afterBytes(ctx, src, id, err)
			t.pw.CloseWithError(herr)
			return herr
		}
	}
}
