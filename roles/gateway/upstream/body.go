package upstream

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/httpx/client"
)

// ErrStalled is the read error of a response body that made no progress
// within ForwardTimeout.
var ErrStalled = errors.New("upstream: response body made no progress within forward_timeout")

// errStalledCause cancels an attempt whose body stalled.
var errStalledCause = errors.New("upstream: body stalled")

// errBodyDone is the read error of a request body once its call is over.
var errBodyDone = errors.New("upstream: request body read after the call ended")

// requestBody is the call's body as the transport sees it: reads report
// progress to the attempt's watchdog; Close only stops further reads (the
// caller owns the underlying reader).
type requestBody struct {
	r    io.Reader
	wd   *client.StallWatch
	want int64 // declared length, -1 unknown
	read int64
	done atomic.Bool
}

func (b *requestBody) Read(p []byte) (int, error) {
	if b.done.Load() {
		return 0, errBodyDone
	}
	b.wd.ReadStart()
	n, err := b.r.Read(p)
	b.read += int64(n)
	b.wd.ReadEnd(err != nil || b.want >= 0 && b.read >= b.want)
	return n, err
}

// Close marks the body finished: later reads fail without touching the
// caller's reader.
func (b *requestBody) Close() error {
	b.close()
	return nil
}

func (b *requestBody) close() {
	if b != nil {
		b.done.Store(true)
	}
}

// responseBody wraps an upstream body: each read must return within fwd
// (fwd 0: no limit, for streams); Close ends the attempt's context and the
// request body.
type responseBody struct {
	rc      io.ReadCloser
	actx    context.Context
	cancel  context.CancelCauseFunc
	fwd     time.Duration
	t       *time.Timer // fires errStalledCause; armed only during a read
	req     *requestBody
	stalled atomic.Bool
}

func (l *Link) wrapBody(rc io.ReadCloser, actx context.Context, cancel context.CancelCauseFunc, stream bool,
	fwd time.Duration, req *requestBody) io.ReadCloser {
	b := &responseBody{rc: rc, actx: actx, cancel: cancel, req: req}
	if !stream {
		b.fwd = fwd
		b.t = time.AfterFunc(fwd, func() { b.stall(l.met.timeouts.Inc) })
		b.t.Stop()
	}
	return b
}

// stall cancels the attempt for lack of progress, counting it once (first:
// whoever sees the cancel may read the count).
func (b *responseBody) stall(count func()) {
	if b.actx.Err() != nil || b.stalled.Swap(true) {
		return
	}
	count()
	b.cancel(errStalledCause)
}

func (b *responseBody) Read(p []byte) (int, error) {
	if b.t == nil {
		return b.rc.Read(p)
	}
	if b.stalled.Load() {
		return 0, ErrStalled
	}
	b.t.Reset(b.fwd)
	n, err := b.rc.Read(p)
	b.t.Stop()
	if err != nil && err != io.EOF && b.stalled.Load() {
		return n, ErrStalled
	}
	return n, err
}

// Close closes the upstream body and releases the attempt.
func (b *responseBody) Close() error {
	if b.t != nil {
		b.t.Stop()
	}
	err := b.rc.Close()
	b.cancel(nil)
	b.req.close()
	return err
}
