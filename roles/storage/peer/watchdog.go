package peer

import (
	"context"
	"io"
	"sync/atomic"
	"time"
)

// watchdog cancels its context with errStall once no progress was reported
// for d while the body's source was not busy. It starts no goroutine of its
// own: one timer re-arms itself for the time left after the last kick.
type watchdog struct {
	d       time.Duration
	cancel  context.CancelCauseFunc
	t       *time.Timer
	last    atomic.Int64 // unix ns of the last progress
	busy    atomic.Bool  // inside the source's Read: a slow source (repair pacing) is not a stalled target
	stopped atomic.Bool
}

// watch returns a context derived from ctx that the watchdog cancels after
// d without progress; stop must be called when the exchange is over.
func watch(ctx context.Context, d time.Duration) (context.Context, *watchdog) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &watchdog{d: d, cancel: cancel}
	w.last.Store(time.Now().UnixNano())
	w.t = time.AfterFunc(d, w.fire)
	return ctx, w
}

// kick records progress now.
func (w *watchdog) kick() { w.last.Store(time.Now().UnixNano()) }

// fire cancels when the last progress is d old, else re-arms for the rest.
func (w *watchdog) fire() {
	if w.stopped.Load() {
		return
	}
	idle := time.Since(time.Unix(0, w.last.Load()))
	if w.busy.Load() {
		idle = 0
	}
	if idle >= w.d {
		w.cancel(errStall)
		return
	}
	w.t.Reset(w.d - idle)
}

// stop disarms the watchdog and releases its context.
func (w *watchdog) stop() {
	w.stopped.Store(true)
	w.t.Stop()
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
	p.w.busy.Store(true)
	n, err := p.r.Read(b)
	p.w.kick()
	p.w.busy.Store(false)
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
