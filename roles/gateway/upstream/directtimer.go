package upstream

import (
	"sync"
	"time"
)

// directTimer is a direct attempt's one timer. Until the headers it fires at
// the attempt's limit; after them it watches the body: the handler must
// write again within ForwardTimeout of its last write (or of the headers),
// time spent inside a write to the client not counted. It re-arms itself
// lazily, so writes only update fields under the mutex.
type directTimer struct {
	mu    sync.Mutex
	t     *time.Timer
	d     *directAttempt
	fwd   time.Duration
	body  bool      // the headers were committed
	busy  bool      // a write to the client is in progress
	last  time.Time // end of the last write (the commit before the first)
	over  bool      // fired or stopped
	stall bool      // fired while watching the body
}

// start arms the timer for the headers, due at limit.
func (t *directTimer) start(now time.Time, d *directAttempt, limit time.Time) {
	t.d, t.fwd = d, d.pol.ForwardTimeout
	t.mu.Lock()
	t.t = time.AfterFunc(limit.Sub(now), t.fire)
	t.mu.Unlock()
}

// fire runs on the timer: it re-arms while the body makes progress, else
// ends the attempt.
func (t *directTimer) fire() {
	t.mu.Lock()
	if t.over {
		t.mu.Unlock()
		return
	}
	now := time.Now()
	if t.body {
		if t.busy {
			t.t.Reset(t.fwd)
			t.mu.Unlock()
			return
		}
		if idle := now.Sub(t.last); idle < t.fwd {
			t.t.Reset(t.fwd - idle)
			t.mu.Unlock()
			return
		}
	}
	t.over, t.stall = true, t.body
	t.mu.Unlock()
	t.d.timedOut(t.stall, now)
}

// headers switches to watching the body; false when the timer had already
// fired (the attempt timed out).
func (t *directTimer) headers() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.over {
		return false
	}
	t.body, t.last = true, time.Now()
	t.t.Reset(t.fwd)
	return true
}

// writing marks a write to the client as started; false once the body
// stalled.
func (t *directTimer) writing() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stall {
		return false
	}
	t.busy = true
	return true
}

// wrote marks the end of a write.
func (t *directTimer) wrote() {
	t.mu.Lock()
	t.busy, t.last = false, time.Now()
	t.mu.Unlock()
}

// stop ends the watch (the attempt is over).
func (t *directTimer) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.t != nil && !t.over {
		t.over = true
		t.t.Stop()
	}
}

// stalled reports whether the body stalled.
func (t *directTimer) stalled() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stall
}
