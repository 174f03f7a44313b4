package hedge

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ronhq/ron/runtime"
)

// Final outcomes of a leg; also the result label of
// ron_index_peer_requests_total (docs/index.md §13).
const (
	outOK       = "ok"
	outNotFound = "not_found"
	outError    = "error"
	outCanceled = "canceled"
	outSkipped  = "skipped"
)

// outcome is one leg's final answer, sent to the event loop.
type outcome[T any] struct {
	peer    string
	val     T
	err     error
	kind    string
	retries int
}

// lookup is the state of one Lookup call. Only the goroutine running run
// touches its fields except wg, out, ctx and the read-only ones.
type lookup[T any] struct {
	opt    Options
	peers  []Peer[T]
	sat    func(T) bool
	met    meters
	parent context.Context
	ctx    context.Context
	cancel context.CancelCauseFunc
	stopDL context.CancelFunc
	wg     sync.WaitGroup
	out    chan outcome[T] // capacity len(peers): legs never block sending
	start  time.Time

	next     int  // index of the next candidate
	pending  int  // legs started and not yet reported
	hedgeRun bool // the β wave was attempted
	res      Result
	answered bool // some peer answered not found / unsatisfied
	best     T    // first unsatisfied answer
	haveBest bool
	fails    []PeerError
}

func newLookup[T any](parent context.Context, peers []Peer[T], sat func(T) bool, opt Options) *lookup[T] {
	l := &lookup[T]{opt: opt, peers: peers, sat: sat, met: newMeters(opt), parent: parent,
		out: make(chan outcome[T], len(peers)), start: time.Now()}
	cctx, cancel := context.WithCancelCause(parent)
	l.ctx, l.stopDL = context.WithTimeoutCause(cctx, opt.Deadline, ErrTimeout)
	l.cancel = cancel
	return l
}

// stop cancels every open leg and waits until they all returned.
func (l *lookup[T]) stop() {
	l.cancel(ErrLost)
	l.stopDL()
	l.wg.Wait()
}

// run is the event loop; it returns the decision.
func (l *lookup[T]) run() (T, error) {
	l.launch(l.opt.Alpha)
	hedge := time.NewTimer(l.opt.HedgeAfter)
	defer hedge.Stop()
	for {
		if l.pending == 0 {
			if !l.hedgeRun && l.next < len(l.peers) {
				l.hedgeNow() // docs/index.md §6 rule 2: every α leg finished unsatisfied
				continue
			}
			return l.finish()
		}
		select {
		case o := <-l.out:
			if v, won := l.record(o); won {
				return v, nil
			}
		case <-hedge.C:
			l.hedgeNow()
		case <-l.ctx.Done():
			return l.expired()
		}
	}
}

// hedgeNow starts the β wave, once.
func (l *lookup[T]) hedgeNow() {
	if l.hedgeRun {
		return
	}
	l.hedgeRun = true
	l.res.Hedged = l.launch(l.opt.Beta) > 0
}

// launch starts legs to the next n available candidates and returns how
// many it started.
func (l *lookup[T]) launch(n int) int {
	started := 0
	for started < n && l.next < len(l.peers) {
		p := l.peers[l.next]
		l.next++
		if a, ok := p.(Availability); ok && !a.Available() {
			l.res.Skipped++
			l.fails = append(l.fails, PeerError{Peer: p.Name(), Err: errSkipped})
			l.met.peer(p.Name(), outSkipped)
			continue
		}
		started++
		l.pending++
		l.res.Asked++
		l.wg.Add(1)
		l.met.spawned()
		go l.leg(p)
	}
	return started
}

// record books one leg's outcome; it reports a win.
func (l *lookup[T]) record(o outcome[T]) (T, bool) {
	l.pending--
	l.res.Retries += o.retries
	switch o.kind {
	case outOK:
		l.res.Winner = o.peer
		return o.val, true
	case outNotFound:
		l.answered = true
		if o.err == nil && !l.haveBest {
			l.best, l.haveBest = o.val, true
		}
	default:
		l.fails = append(l.fails, PeerError{Peer: o.peer, Err: o.err})
	}
	var zero T
	return zero, false
}

// finish decides once every leg finished unsatisfied (docs/index.md §6 rule 4).
func (l *lookup[T]) finish() (T, error) {
	if l.answered {
		return l.best, ErrNotFound
	}
	var zero T
	return zero, &UnavailableError{Peers: l.fails}
}

// expired decides when the budget ran out or the caller gave up (docs/index.md §6 rule 5).
func (l *lookup[T]) expired() (T, error) {
	var zero T
	if l.parent.Err() != nil {
		if errors.Is(l.parent.Err(), context.Canceled) {
			l.met.aborted(l.pending)
		}
		return zero, wrapCause(l.parent)
	}
	return zero, fmt.Errorf("%w after %v with %d of %d legs open", ErrTimeout, l.opt.Deadline, l.pending, l.res.Asked)
}

// leg asks one peer, retrying transient failures, and reports the outcome.
func (l *lookup[T]) leg(p Peer[T]) {
	defer l.wg.Done()
	v, retries, err := l.attempts(p)
	kind := l.classify(v, err)
	l.met.peer(p.Name(), kind)
	if kind == outCanceled {
		l.met.canceled()
	}
	l.out <- outcome[T]{peer: p.Name(), val: v, err: err, kind: kind, retries: retries}
}

// attempts runs the first attempt and the allowed retries (docs/index.md §6 Retries).
func (l *lookup[T]) attempts(p Peer[T]) (T, int, error) {
	for n := 0; ; n++ {
		v, err := p.Lookup(l.ctx)
		if err == nil || n >= l.opt.Retries || l.ctx.Err() != nil || !l.opt.Transient(err) {
			return v, n, err
		}
		if !l.pause() {
			return v, n, err
		}
		l.met.retry()
	}
}

// pause waits before a retry. It returns false without waiting when the
// retry would start with MinRetryBudget or less left, and false when the
// lookup ends during the wait.
func (l *lookup[T]) pause() bool {
	d := l.opt.RetryPauseMin
	if spread := l.opt.RetryPauseMax - l.opt.RetryPauseMin; spread > 0 {
		d += rand.N(spread + 1)
	}
	if dl, ok := l.ctx.Deadline(); ok && time.Until(dl)-d <= l.opt.MinRetryBudget {
		return false
	}
	return runtime.Sleep(l.ctx, d)
}

// classify names a leg's final outcome.
func (l *lookup[T]) classify(v T, err error) string {
	switch {
	case err == nil && l.sat(v):
		return outOK
	case err == nil || l.opt.NotFound(err):
		return outNotFound
	case context.Cause(l.ctx) == ErrLost:
		return outCanceled
	case isSkip(err):
		return outSkipped
	}
	return outError
}
