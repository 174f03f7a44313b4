package admission

import "sync/atomic"

// DefaultMaxStreams is max_streams (docs/gateway.md §3.8, §9).
const DefaultMaxStreams = 256

// StreamGate bounds the event streams open at once (max_streams): a stream
// is admitted by TryAcquire and gives its place back with Release. It never
// blocks; all methods are safe for concurrent use.
type StreamGate struct {
	max   atomic.Int64
	inUse atomic.Int64
}

// NewStreamGate returns a gate for max streams (≤ 0: DefaultMaxStreams).
func NewStreamGate(max int) *StreamGate {
	g := &StreamGate{}
	g.SetMax(max)
	return g
}

// TryAcquire takes a place when fewer than the maximum are open; false means
// the caller answers 429 busy (details.limit "max_streams").
func (g *StreamGate) TryAcquire() bool {
	for {
		n := g.inUse.Load()
		if n >= g.max.Load() {
			return false
		}
		if g.inUse.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release gives back a place taken by TryAcquire; it must be called exactly
// once per successful TryAcquire. An unmatched Release panics (a programming
// error, like a negative sync.WaitGroup counter).
func (g *StreamGate) Release() {
	if g.inUse.Add(-1) < 0 {
		g.inUse.Add(1)
		panic("admission: StreamGate.Release without TryAcquire")
	}
}

// SetMax changes the maximum live (≤ 0: DefaultMaxStreams). Lowering it
// closes nothing: streams already open stay, and new ones are refused
// until fewer than the new maximum are open.
func (g *StreamGate) SetMax(max int) {
	if max <= 0 {
		max = DefaultMaxStreams
	}
	g.max.Store(int64(max))
}

// InUse reports how many streams hold a place.
func (g *StreamGate) InUse() int { return int(g.inUse.Load()) }

// Max reports the current maximum.
func (g *StreamGate) Max() int { return int(g.max.Load()) }
