package client

import (
	"sync"
	"time"
)

// StallWatch bounds an exchange whose request body the peer must keep
// taking, the one stall watchdog of every caller (docs/architecture.md §5):
// it fires once the peer has taken nothing for its stall time — time spent
// inside the body's own reads (a slow or paced source) is not the peer's —
// and the exchange is past its floor. Without a body it fires at the floor.
// Once the body has ended, the peer answers by the floor when the body ended
// before it, else within the stall time of the end (or of the last
// Progress). It starts no goroutine: one timer re-arms itself lazily, so the
// body's reads only update fields under a mutex.
type StallWatch struct {
	mu      sync.Mutex
	t       *time.Timer
	floor   time.Time
	stall   time.Duration
	body    bool
	reading bool
	last    time.Time // the last progress (start before any)
	eof     time.Time // when the body ended; zero until then
	over    bool      // stopped or fired
	fire    func(now time.Time)
}

// WatchStall starts watching an exchange that began at start: fire is
// called once, from the timer's goroutine, when the exchange stalls (see
// StallWatch); floor is the earliest it may fire.
func WatchStall(start, floor time.Time, stall time.Duration, body bool, fire func(now time.Time)) *StallWatch {
	w := &StallWatch{floor: floor, stall: stall, body: body, last: start, fire: fire}
	first := w.due() // no floor: the first stall is due
	if floor.After(start) {
		first = floor // the body may end before it, which makes the floor due
	}
	w.mu.Lock()
	w.t = time.AfterFunc(first.Sub(start), w.check)
	w.mu.Unlock()
	return w
}

// due is when the exchange stalls given what the body did so far.
func (w *StallWatch) due() time.Time {
	switch {
	case !w.body:
		return w.floor
	case w.eof.IsZero():
		if stall := w.last.Add(w.stall); stall.After(w.floor) {
			return stall
		}
		return w.floor
	case w.eof.Before(w.floor):
		return w.floor
	}
	return w.last.Add(w.stall)
}

// check runs on the timer: it re-arms until due, then fires.
func (w *StallWatch) check() {
	w.mu.Lock()
	if w.over {
		w.mu.Unlock()
		return
	}
	now := time.Now()
	if w.reading {
		w.t.Reset(w.stall)
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
	w.fire(now)
}

// Stop ends the watch. It reports false when the watch had already fired.
func (w *StallWatch) Stop() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.over {
		return false
	}
	w.over = true
	w.t.Stop()
	return true
}

// ReadStart and ReadEnd bracket one read of the request body; eof marks
// the body's end.
func (w *StallWatch) ReadStart() {
	w.mu.Lock()
	w.reading = true
	w.mu.Unlock()
}

// ReadEnd ends a read begun by ReadStart: the peer took what came before.
func (w *StallWatch) ReadEnd(eof bool) {
	w.mu.Lock()
	w.reading = false
	w.last = time.Now()
	if eof && w.eof.IsZero() {
		w.eof = w.last
	}
	w.mu.Unlock()
}

// Progress records progress now without a body read (response headers
// arrived).
func (w *StallWatch) Progress() {
	w.mu.Lock()
	w.last = time.Now()
	w.mu.Unlock()
}
