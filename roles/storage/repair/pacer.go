package repair

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ronhq/ron/roles/storage/storageapi"
	"golang.org/x/time/rate"
)

// Burst is the token bucket's depth: repair bytes sent in any interval Δ
// stay ≤ pace·Δ + Burst.
const Burst = 1 << 20

// Pacer is the node's single repair token bucket (rate = pace, burst
// 1 MiB), shared by every push and pull. The pace is the configured one
// unless an admin boost is in force; a pace of 0 pauses repair. A change
// of pace also re-times the waits in progress. Safe for concurrent use.
type Pacer struct {
	lim    *rate.Limiter
	onWait func(time.Duration)

	mu         sync.Mutex
	configured int64
	boost      int64 // pace during a boost
	boostUntil time.Time
	boostTimer *time.Timer
	changed    chan struct{} // closed and replaced on every change of pace
}

// NewPacer returns a pacer at pace bytes/s; onWait (may be nil) observes
// every wait.
func NewPacer(pace int64, onWait func(time.Duration)) *Pacer {
	p := &Pacer{lim: rate.NewLimiter(rate.Limit(max(pace, 1)), Burst), onWait: onWait,
		configured: pace, changed: make(chan struct{})}
	return p
}

// Pace returns the pace in force (bytes/s; 0 = paused).
func (p *Pacer) Pace() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paceLocked()
}

// BoostUntil returns the end of the boost in force (zero when none).
func (p *Pacer) BoostUntil() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.boostUntil
}

func (p *Pacer) paceLocked() int64 {
	if !p.boostUntil.IsZero() {
		return p.boost
	}
	return p.configured
}

// SetConfigured changes the configured pace (a reload); a boost in force
// keeps its pace until it ends.
func (p *Pacer) SetConfigured(pace int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.configured = pace
	p.applyLocked()
}

// Boost sets the pace to bytesPerS (0 pauses) for d (≤
// storageapi.MaxRepairBoost, the admin API's limit), after which the
// configured pace returns. A new boost replaces the previous one.
func (p *Pacer) Boost(bytesPerS int64, d time.Duration) (until time.Time, err error) {
	if bytesPerS < 0 || d <= 0 || d > storageapi.MaxRepairBoost {
		return time.Time{}, fmt.Errorf("repair: boost of %d B/s for %v is out of range", bytesPerS, d)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopTimerLocked()
	p.boost, p.boostUntil = bytesPerS, time.Now().Add(d)
	gen := p.boostUntil
	p.boostTimer = time.AfterFunc(d, func() { p.endBoost(gen) })
	p.applyLocked()
	return p.boostUntil, nil
}

// endBoost restores the configured pace unless another boost replaced the
// one that ends at gen.
func (p *Pacer) endBoost(gen time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.boostUntil.Equal(gen) {
		return
	}
	p.boostUntil, p.boostTimer = time.Time{}, nil
	p.applyLocked()
}

// Stop cancels a boost's timer (the role is stopping).
func (p *Pacer) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopTimerLocked()
}

func (p *Pacer) stopTimerLocked() {
	if p.boostTimer != nil {
		p.boostTimer.Stop()
		p.boostTimer = nil
	}
}

// applyLocked moves the bucket to the pace in force and wakes the waiters.
// While paused the bucket keeps its last positive rate: nobody draws from
// it, and it refills to at most Burst.
func (p *Pacer) applyLocked() {
	if pace := p.paceLocked(); pace > 0 {
		p.lim.SetLimit(rate.Limit(pace))
	}
	close(p.changed)
	p.changed = make(chan struct{})
}

// state returns whether repair is paused and the channel closed at the
// next change of pace.
func (p *Pacer) state() (paused bool, changed <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paceLocked() == 0, p.changed
}

// Wait takes n tokens (n ≤ Burst), waiting while paused and for the bucket
// to refill, until ctx ends. A change of pace cancels the reservation and
// takes the tokens again at the new pace.
func (p *Pacer) Wait(ctx context.Context, n int) error {
	if n > Burst {
		return fmt.Errorf("repair: %d tokens exceed the burst", n)
	}
	start := time.Now()
	err := p.wait(ctx, n)
	if p.onWait != nil {
		p.onWait(time.Since(start))
	}
	return err
}

func (p *Pacer) wait(ctx context.Context, n int) error {
	for {
		paused, changed := p.state()
		if paused {
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		r := p.lim.ReserveN(time.Now(), n)
		d := r.Delay()
		if d == 0 {
			return nil
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
			return nil
		case <-changed:
			t.Stop()
			r.Cancel()
		case <-ctx.Done():
			t.Stop()
			r.Cancel()
			return ctx.Err()
		}
	}
}
