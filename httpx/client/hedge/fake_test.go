package hedge

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/httpx"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// forever is a delay no test reaches: the step waits for ctx.
const forever = time.Hour

// step is one scripted attempt: after d, answer v or err.
type step struct {
	d   time.Duration
	v   string
	err error
}

// fake is a scripted Peer; the last step repeats. It records when each
// attempt started and when (and why) it saw its context end.
type fake struct {
	name  string
	steps []step
	down  bool // Available() == false

	mu      sync.Mutex
	starts  []time.Time
	doneAt  time.Time
	cause   error
	running int
}

func (f *fake) Name() string    { return f.name }
func (f *fake) Available() bool { return !f.down }

func (f *fake) Lookup(ctx context.Context) (string, error) {
	f.mu.Lock()
	s := f.steps[min(len(f.starts), len(f.steps)-1)]
	f.starts = append(f.starts, time.Now())
	f.running++
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.running--; f.mu.Unlock() }()
	t := time.NewTimer(s.d)
	defer t.Stop()
	select {
	case <-t.C:
		return s.v, s.err
	case <-ctx.Done():
		f.mu.Lock()
		f.doneAt, f.cause = time.Now(), context.Cause(ctx)
		f.mu.Unlock()
		return "", ctx.Err()
	}
}

func (f *fake) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.starts)
}

func (f *fake) startedAt(i int) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.starts) {
		return time.Time{}
	}
	return f.starts[i]
}

func (f *fake) ended() (time.Time, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.doneAt, f.running, f.cause
}

// peers turns fakes into the Peer slice Lookup takes.
func peers(fs ...*fake) []Peer[string] {
	out := make([]Peer[string], len(fs))
	for i, f := range fs {
		out[i] = f
	}
	return out
}

// hit is the satisfactory test answer.
func hit(v string) bool { return v == "hit" }

func after(d time.Duration, v string) []step { return []step{{d: d, v: v}} }

func failAfter(d time.Duration, err error) []step { return []step{{d: d, err: err}} }

func hang() []step { return []step{{d: forever}} }

var (
	err503 = httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable, "busy peer")
	err404 = httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no such name")
	err429 = httpx.NewError(http.StatusTooManyRequests, httpx.CodeBusy, "slow down")
	err400 = httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "bad key")
)
