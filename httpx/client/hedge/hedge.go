package hedge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ronhq/ron/runtime"
)

// Defaults of Options: the index peer-lookup defaults of docs/index.md §6
// and §12 (the index is the engine's one user).
const (
	DefaultAlpha          = 3
	DefaultBeta           = 2
	DefaultHedgeAfter     = 150 * time.Millisecond
	DefaultDeadline       = 1200 * time.Millisecond
	DefaultRetries        = 3
	DefaultRetryPauseMin  = 50 * time.Millisecond
	DefaultRetryPauseMax  = 100 * time.Millisecond
	DefaultMinRetryBudget = 100 * time.Millisecond
)

// Peer is one lookup target. Lookup must return promptly (without waiting for
// I/O to finish) once ctx is done. A nil error with an answer the caller's
// satisfactory func rejects is an unsatisfied answer (e.g. no live records);
// an error for which Options.NotFound is true is a not-found answer.
type Peer[T any] interface {
	Name() string
	Lookup(ctx context.Context) (T, error)
}

// Availability is optionally implemented by a Peer. A peer that is not
// available when its leg would start (its breaker is open) is skipped: it
// takes no slot in the wave and the next candidate is asked instead (docs/index.md §6).
type Availability interface {
	Available() bool
}

// Func adapts a name and a function to a Peer.
func Func[T any](name string, fn func(ctx context.Context) (T, error)) Peer[T] {
	return funcPeer[T]{name: name, fn: fn}
}

type funcPeer[T any] struct {
	name string
	fn   func(ctx context.Context) (T, error)
}

func (p funcPeer[T]) Name() string                          { return p.name }
func (p funcPeer[T]) Lookup(ctx context.Context) (T, error) { return p.fn(ctx) }

// Options tune Lookup. Zero fields take the Default* values; a negative Beta
// or Retries means none.
type Options struct {
	Alpha, Beta int           // legs in the first wave and in the hedge wave
	HedgeAfter  time.Duration // when the hedge wave starts (hedge_ms)
	Deadline    time.Duration // total budget of the call (deadline_ms)
	Retries     int           // retries per leg after its first attempt
	// A retry waits a uniform pause in [RetryPauseMin, RetryPauseMax] and is
	// made only if more than MinRetryBudget of the budget remains when it
	// would start.
	RetryPauseMin, RetryPauseMax time.Duration
	MinRetryBudget               time.Duration
	// Transient says whether a failed attempt may be retried (default
	// DefaultTransient). NotFound says whether an error is a not-found answer
	// rather than a failure (default DefaultNotFound).
	Transient func(error) bool
	NotFound  func(error) bool
	// Metrics, when set, receives the docs/index.md §13 metrics labelled
	// role=Role. Role is required when Metrics is set (Lookup fails
	// without it); the index passes "index".
	Metrics *runtime.Metrics
	Role    string
}

func (o Options) withDefaults() Options {
	o.Alpha = orDefault(o.Alpha, DefaultAlpha)
	o.Beta = orDefault(o.Beta, DefaultBeta)
	o.Retries = orDefault(o.Retries, DefaultRetries)
	o.HedgeAfter = orDefault(o.HedgeAfter, DefaultHedgeAfter)
	o.Deadline = orDefault(o.Deadline, DefaultDeadline)
	o.RetryPauseMin = orDefault(o.RetryPauseMin, DefaultRetryPauseMin)
	o.RetryPauseMax = max(orDefault(o.RetryPauseMax, DefaultRetryPauseMax), o.RetryPauseMin)
	o.MinRetryBudget = orDefault(o.MinRetryBudget, DefaultMinRetryBudget)
	if o.Transient == nil {
		o.Transient = DefaultTransient
	}
	if o.NotFound == nil {
		o.NotFound = DefaultNotFound
	}
	return o
}

// orDefault maps 0 to def and negative values to 0.
func orDefault[N int | time.Duration](v, def N) N {
	if v == 0 {
		return def
	}
	return max(v, 0)
}

// Result describes how a Lookup went.
type Result struct {
	Winner  string        // the peer whose answer was returned ("" for none)
	Asked   int           // legs started (distinct peers asked)
	Skipped int           // candidates skipped as unavailable
	Hedged  bool          // the β wave started at least one leg
	Retries int           // retries made by legs that finished before return
	Elapsed time.Duration // time from call to return
}

// Errors returned by Lookup; match them with errors.Is.
var (
	// ErrNotFound: every leg finished, none satisfactory, at least one
	// answered not found or unsatisfied (docs/index.md §6 rule 4; resolve answers 404).
	ErrNotFound = errors.New("hedge: not found")
	// ErrTimeout: the total deadline passed first (docs/index.md §6 rule 5; 504 timeout).
	ErrTimeout = errors.New("hedge: deadline reached")
	// ErrUnavailable: every leg failed or was skipped (docs/index.md §6 rule 4; 503).
	ErrUnavailable = errors.New("hedge: all peers failed")
	// ErrLost is the context cause seen by legs cancelled because another
	// leg won (or the lookup ended). ctx.Err() is context.Canceled, which
	// httpx/client excludes from its breaker.
	ErrLost = errors.New("hedge: lookup already answered")
)

// PeerError is one peer's final failure.
type PeerError struct {
	Peer string
	Err  error
}

// UnavailableError is returned when every leg failed or was skipped. It
// matches ErrUnavailable and names each peer with its error.
type UnavailableError struct {
	Peers []PeerError
}

func (e *UnavailableError) Error() string {
	if len(e.Peers) == 0 {
		return ErrUnavailable.Error() + ": no peers"
	}
	parts := make([]string, len(e.Peers))
	for i, p := range e.Peers {
		parts[i] = p.Peer + ": " + p.Err.Error()
	}
	return ErrUnavailable.Error() + ": " + strings.Join(parts, "; ")
}

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Lookup asks peers, in order, for an answer satisfactory reports true for
// (docs/index.md §6):
//   - at once, legs to the first Alpha available peers;
//   - after HedgeAfter without a satisfactory answer, legs to the next Beta
//     available peers; at once if every first-wave leg already finished;
//   - the first satisfactory answer is returned and every other leg's context
//     is cancelled with cause ErrLost;
//   - when every leg finished unsatisfied: ErrNotFound with the first
//     unsatisfied answer (zero T if all were not-found errors) if any peer
//     answered, else an *UnavailableError naming every peer's failure;
//   - when Deadline (or ctx's deadline) passes first: ErrTimeout; when ctx is
//     cancelled: its cause.
//
// Lookup returns once the decision is made and every leg it started has
// observed the cancellation: no goroutine outlives the call, so Peer.Lookup
// must be cancellation-prompt.
func Lookup[T any](ctx context.Context, peers []Peer[T], satisfactory func(T) bool, opt Options) (T, Result, error) {
	if opt.Metrics != nil && opt.Role == "" {
		var zero T
		return zero, Result{}, errNoRole
	}
	l := newLookup(ctx, peers, satisfactory, opt.withDefaults())
	defer l.stop()
	v, err := l.run()
	l.res.Elapsed = time.Since(l.start)
	l.met.done(l.res, err)
	return v, l.res, err
}

// errNoRole is Lookup's answer to options with Metrics but no Role (the
// metrics' role label): a wiring mistake, refused before any leg starts.
var errNoRole = errors.New("hedge: Options.Role is required when Options.Metrics is set")

// wrapCause turns the caller's cancellation into Lookup's error.
func wrapCause(parent context.Context) error {
	if errors.Is(parent.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: caller's deadline", ErrTimeout)
	}
	return context.Cause(parent)
}
