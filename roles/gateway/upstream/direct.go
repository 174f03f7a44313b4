package upstream

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/runtime"
)

// serveDirect is Serve for an in-process call without a body: each attempt
// runs the role's handler in this goroutine (see directAttempt).
func (l *Link) serveDirect(ctx context.Context, c Call, w http.ResponseWriter, commit Commit) (bool, int, error) {
	p, err := l.prepare(ctx, &c, false)
	if err != nil {
		return false, 0, err
	}
	for n := 1; ; n++ {
		if c.Attempts != nil {
			*c.Attempts = n
		}
		d := &directAttempt{l: l, c: c, w: w, commit: commit, pol: p.pol, deadline: p.deadline, more: n < p.attempts, n: n}
		d.run(ctx)
		switch {
		case d.state == stateServed:
			return true, d.status, d.bodyErr()
		case d.state == stateDeclined:
			return false, d.status, nil
		case d.state == stateRetry:
		case !d.out.retry || n >= p.attempts:
			return false, 0, d.out.err
		default:
			d.pause = l.backoff(n, p.pol)
			if !time.Now().Add(d.pause).Before(p.deadline) {
				return false, 0, d.out.err
			}
		}
		l.met.retries.Inc()
		if !runtime.Sleep(ctx, d.pause) {
			return false, 0, l.callerGone(ctx)
		}
	}
}

// directRequest is the request of one direct attempt, under actx plus the
// link principal: the origin-form URL (the base URL's path, then the
// call's), Host the link's, the link headers and Request-Timeout. The
// handler takes it over.
func (l *Link) directRequest(ctx, actx context.Context, c *Call, remaining time.Duration) (*http.Request, error) {
	uri := strings.TrimSuffix(l.base.EscapedPath(), "/")
	if !strings.HasPrefix(c.Path, "/") {
		uri += "/"
	}
	uri += c.Path
	if c.RawQuery != "" {
		uri += "?" + c.RawQuery
	}
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(auth.WithClaims(actx, l.principal), method, uri, nil)
	if err != nil {
		return nil, errInternal("invalid upstream path")
	}
	if req.Header, err = l.linkHeader(ctx, c, requestTimeout(remaining)); err != nil {
		return nil, err
	}
	req.Host = l.base.Host
	return req, nil
}

// directState is how a direct attempt ended.
type directState int

const (
	stateFailed   directState = iota // no usable answer: see out
	stateRetry                       // a 502/503/504 answer discarded for a retry after pause
	stateDeclined                    // commit declined the answer
	stateServed                      // the answer went to the client
)

// directAttempt is one attempt of serveDirect and the inproc.Sink its
// handler answers through; its timer bounds the time to the headers as in
// Do, then the handler's progress on the body.
type directAttempt struct {
	l        *Link
	c        Call // a copy: one allocation less
	w        http.ResponseWriter
	commit   Commit
	pol      Policy
	deadline time.Time
	more     bool // another attempt may follow
	n        int

	actx   context.Context
	cancel context.CancelCauseFunc
	timer  directTimer
	done   func(error)             // the breaker's verdict callback
	rc     http.ResponseController // of w, once committed

	state  directState
	status int
	pause  time.Duration // stateRetry: the pause before the next attempt
	out    outcome       // stateFailed: the error and whether to retry
	werr   error         // the failed write to the client
	end    error         // how the handler's answer ended (inproc.Transport.Serve)
}

// run makes the attempt: request, breaker, handler.
func (d *directAttempt) run(ctx context.Context) {
	l := d.l
	d.actx, d.cancel = context.WithCancelCause(ctx)
	defer d.cancel(nil)
	now := time.Now()
	req, err := l.directRequest(ctx, d.actx, &d.c, d.deadline.Sub(now))
	if err != nil {
		d.out = outcome{err: err}
		return
	}
	if d.done, err = l.br.Load().allow(); err != nil {
		d.out = outcome{err: err}
		return
	}
	d.timer.start(now, d, earlier(d.deadline, now.Add(d.pol.ForwardTimeout)))
	d.end = l.local.Serve(req, d)
	d.timer.stop()
	if d.state == stateFailed {
		err := d.end
		if err == nil {
			err = context.Cause(d.actx)
		}
		d.out = l.failed(ctx, d.actx, &d.c, err, d.done)
	}
}

// Commit implements inproc.Sink: it counts the attempt, tells the breaker,
// discards an answer that will be retried, and hands the final one to the
// caller's commit.
func (d *directAttempt) Commit(status int, h http.Header) {
	if !d.timer.headers() || d.actx.Err() != nil {
		return // timed out or abandoned: stateFailed
	}
	d.l.met.attempt(status)
	d.done(statusVerdict(status))
	d.status = status
	if d.more && retryStatus(status) {
		now := time.Now()
		pause := max(d.l.backoff(d.n, d.pol), client.RetryAfterHeader(h, now))
		if now.Add(pause).Before(d.deadline) {
			d.state, d.pause = stateRetry, pause
			return
		}
	}
	if !d.commit(status, h) {
		d.state = stateDeclined
		return
	}
	d.state = stateServed
	d.w.WriteHeader(status)
	d.rc = *http.NewResponseController(d.w)
}

// Write implements inproc.Sink: the body of a served answer goes to the
// client under a write deadline (time the progress limit does not count);
// that of a discarded one is dropped.
func (d *directAttempt) Write(p []byte) (int, error) {
	if d.state != stateServed {
		return len(p), nil
	}
	if !d.timer.writing() {
		return 0, ErrStalled
	}
	_ = d.rc.SetWriteDeadline(time.Now().Add(d.pol.ForwardTimeout))
	n, err := d.w.Write(p)
	d.timer.wrote()
	if err != nil {
		d.werr = err
	}
	return n, err
}

// timedOut cancels the attempt when its timer fires: before the headers
// with errAttemptTimeout (errDeadline once the deadline passed), after them
// with errStalledCause, counted in ron_io_timeouts_total{op="forward"}.
func (d *directAttempt) timedOut(body bool, now time.Time) {
	switch {
	case body:
		if d.actx.Err() == nil { // not when the client already left
			d.l.met.timeouts.Inc() // first: whoever sees the cancel may read the count
			d.cancel(errStalledCause)
		}
	case !now.Before(d.deadline):
		d.cancel(errDeadline)
	default:
		d.cancel(errAttemptTimeout)
	}
}

// bodyErr is the error of a served answer's body: stalled, the client's
// write, or how the handler ended.
func (d *directAttempt) bodyErr() error {
	switch {
	case d.timer.stalled():
		return ErrStalled
	case d.werr != nil:
		return d.werr
	}
	return d.end
}
