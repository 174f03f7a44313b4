package repair

import (
	"math"
	"sync"
	"time"

	"github.com/ronhq/ron/roles/storage/storageapi"
)

// passStats are one pass's counters.
type passStats struct {
	scanned, total, under, queued, skipped, excess int64
	skippedBytes, bytesDone, errors                int64
	minCopies                                      int // -1: no decided object yet
	lastError                                      string
}

func newPassStats(total int64) passStats { return passStats{total: total, minCopies: -1} }

// progress holds the pass counters and the rate EWMA.
type progress struct {
	mu       sync.Mutex
	running  bool
	pass     uint64
	cur      passStats // the pass in progress, or the last one
	last     passStats // the last complete pass
	lastDur  time.Duration
	complete bool // a pass has completed
	rate     ewma
}

func (p *progress) begin(total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = true
	p.pass++
	p.cur = newPassStats(total)
}

func (p *progress) end(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = false
	p.last, p.lastDur, p.complete = p.cur, d, true
}

// decided counts one scanned object's decision.
func (p *progress) decided(d Decision, excessKept bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur.scanned++
	if d.Undecided {
		return
	}
	if d.Under {
		p.cur.under++
	}
	if excessKept {
		p.cur.excess++
	}
	if p.cur.minCopies < 0 || d.Copies < p.cur.minCopies {
		p.cur.minCopies = d.Copies
	}
}

func (p *progress) queued() {
	p.mu.Lock()
	p.cur.queued++
	p.mu.Unlock()
}

func (p *progress) skipped(size int64) {
	p.mu.Lock()
	p.cur.skipped++
	p.cur.skippedBytes += size
	p.mu.Unlock()
}

// fail counts an error of the current pass and remembers its text.
func (p *progress) fail(err error) {
	p.mu.Lock()
	p.cur.errors++
	p.cur.lastError = err.Error()
	p.mu.Unlock()
}

func (p *progress) addBytes(n int) {
	p.mu.Lock()
	p.cur.bytesDone += int64(n)
	p.rate.add(time.Now(), float64(n))
	p.mu.Unlock()
}

// lastPass returns the last complete pass's counters and duration.
func (p *progress) lastPass() (passStats, time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last, p.lastDur, p.complete
}

// snapshot fills the counter fields of a RepairProgress and returns the skipped
// bytes of the current pass and whether a pass is running.
func (p *progress) snapshot() (out storageapi.RepairProgress, skippedBytes int64, running bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.cur
	out = storageapi.RepairProgress{Pass: p.pass, Scanned: c.scanned, Total: c.total, UnderReplicated: c.under,
		Queued: c.queued, Skipped: c.skipped, BytesDone: c.bytesDone, Errors: c.errors,
		LastError: c.lastError, RateBytesPerS: p.rate.value(time.Now())}
	if p.running && p.complete {
		out.UnderReplicated = max(c.under, p.last.under)
	}
	return out, c.skippedBytes, p.running
}

func (p *progress) rateNow() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rate.value(time.Now())
}

// ewmaAlpha weighs each whole second of a 30 s EWMA.
var ewmaAlpha = 1 - math.Exp(-1.0/30)

// ewma is a 30 s exponentially weighted moving average of bytes per second
// over one-second buckets, rolled lazily when read or added to (no timer).
type ewma struct {
	rate   float64
	bucket float64 // bytes of the current second
	sec    int64   // the current second (unix); 0 = nothing yet
}

func (e *ewma) add(now time.Time, n float64) {
	e.roll(now)
	e.bucket += n
}

func (e *ewma) value(now time.Time) float64 {
	e.roll(now)
	return e.rate
}

// roll closes every second before now's: the first with its bucket, the
// others (idle) as zeros.
func (e *ewma) roll(now time.Time) {
	s := now.Unix()
	if e.sec == 0 {
		e.sec = s
		return
	}
	if s <= e.sec {
		return
	}
	e.rate += (e.bucket - e.rate) * ewmaAlpha
	e.bucket = 0
	if idle := s - e.sec - 1; idle > 0 {
		e.rate *= math.Pow(1-ewmaAlpha, float64(idle))
	}
	e.sec = s
}
