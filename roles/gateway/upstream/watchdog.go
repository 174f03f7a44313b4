package upstream

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Causes with which a watchdog cancels an attempt.
var (
	errDeadline       = errors.New("upstream: forward deadline passed")
	errAttemptTimeout = errors.New("upstream: attempt timed out")
)

// watchdog cancels an attempt that has no response headers in time. Without
// a request body the limit is the attempt's own (min(deadline, start +
// ForwardTimeout)). With one, see Do: while the body is being sent the
// upstream must take each next piece within ForwardTimeout of the last (a
// read in progress is the client's time, not counted); once the body ended,
// the limit is the attempt's if the body ended before it, else body end +
// ForwardTimeout. The timer re-arms itself lazily, so body reads only
// update fields under the mutex.
type watchdog struct {
	mu       sync.Mutex
	t        *time.Timer
	limit    time.Time
	deadline time.Time
	fwd      time.Duration
	body     bool
	reading  bool
	last     time.Time // end of the last body read (the attempt's start before)
	eof      time.Time // when the body ended; zero until then
	over     bool      // stopped or fired
	cancel   context.CancelCauseFunc
}

func startWatchdog(start, limit, deadline time.Time, fwd time.Duration, body bool, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{limit: limit, deadline: deadline, fwd: fwd, body: body, last: start, cancel: cancel}
	w.mu.Lock()
	w.t = time.AfterFunc(limit.Sub(start), w.check)
	w.mu.Unlock()
	return w
}

// due is when the attempt times out given what the body did so far.
func (w *watchdog) due() time.Time {
	switch {
	case !w.body:
		return w.limit
	case w.eof.IsZero():
		if stall := w.last.Add(w.fwd); stall.After(w.limit) {
			return stall
		}
		return w.limit
	case w.eof.Before(w.limit):
		return w.limit
	}
	return w.eof.Add(w.fwd)
}

// check runs on the timer: it re-arms until due, then cancels the attempt.
func (w *watchdog) check() {
	w.mu.Lock()
	if w.over {
		w.mu.Unlock()
		return
	}
	now := time.Now()
	if w.reading {
		w.t.Reset(w.fwd)
		w.mu.Unlock()
		return
	}
	if due := w.due(); now.Before(due) {
		w.t.Reset(due.Sub(now))
		w.mu.Unlock()
		return
	}
	w.over = true
	w.mu.Unlock()
	cause := errAttemptTimeout
	if !now.Before(w.deadline) {
		cause = errDeadline
	}
	w.cancel(cause)
}

// stop ends the watch when the headers (or an error) arrived. It reports
// false when the watchdog had already fired.
func (w *watchdog) stop() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.over {
		return false
	}
	w.over = true
	w.t.Stop()
	return true
}

// readStart and readEnd bracket one read of the request body.
func (w *watchdog) readStart() {
	w.mu.Lock()
	w.reading = true
	w.mu.Unlock()
}

func (w *watchdog) readEnd(eof bool) {
	w.mu.Lock()
	w.reading = false
	w.last = time.Now()
	if eof && w.eof.IsZero() {
		w.eof = w.last
	}
	w.mu.Unlock()
}
