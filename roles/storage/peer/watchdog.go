package peer

import (
	"context"
	"io"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/httpx/client"
)

// watchdog cancels its context with errStall once no progress was made
// for the stall time while the body's source was not busy
// (client.StallWatch: a slow source, such as repair pacing, is not a stalled
// target).
type watchdog struct {
	*client.StallWatch
	cancel context.CancelCauseFunc
}

// watch returns a context derived from ctx that the watchdog cancels after
// d without progress; stop must be called when the exchange is over.
func watch(ctx context.Context, d time.Duration) (context.Context, *watchdog) {
	ctx, cancel := context.WithCancelCause(ctx)
	now := time.Now()
	w := client.WatchStall(now, now, d, true, func(time.Time) { cancel(errStall) })
	return ctx, &watchdog{StallWatch: w, cancel: cancel}
}

// kick records progress now (the response headers arrived).
func (w *watchdog) kick() { w.Progress() }

// stop disarms the watchdog and releases its context.
func (w *watchdog) stop() {
	w.Stop()
	w.cancel(nil)
}

// progressReader kicks the watchdog when each read of the source returns
// (the previous bytes were written by then) and holds it while the source
// itself is slow: a stall is time the target does not take bytes. It also
// remembers the source's own error so that a failing local read is told
// apart from a failing target.
type progressReader struct {
	r    io.Reader
	w    *watchdog
	fail atomic.Pointer[error]
}

func (p *progressReader) Read(b []byte) (int, error) {
	p.w.ReadStart()
	n, err := p.r.Read(b)
	p.w.ReadEnd(err != nil)
	if err != nil && err != io.EOF {
		p.fail.Store(&err)
	}
	return n, err
}

// sourceErr returns the body's own read error, if any.
func (p *progressReader) sourceErr() error {
	if e := p.fail.Load(); e != nil {
		return *e
	}
	return nil
}
