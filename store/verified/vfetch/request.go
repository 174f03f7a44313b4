package vfetch

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/store/verified"
)

// DefaultTimeout is the Timeout of a Requester that sets none.
const DefaultTimeout = 5 * time.Second

// Requester sends the requests of a verified read to one kind of source.
// The zero value works (http.DefaultClient, DefaultTimeout, no User-Agent).
// A Requester is cheap to build: callers build one per read or per source
// with the settings in force. It is safe for concurrent use as long as its
// fields are not changed.
type Requester struct {
	// HTTP sends the requests; nil: http.DefaultClient. Its Timeout should
	// be zero (the Requester bounds each phase itself).
	HTTP *http.Client
	// Timeout bounds the wait for the response headers, then every
	// progress phase (Call.Read); ≤ 0: DefaultTimeout.
	Timeout time.Duration
	// UserAgent is the User-Agent header of every request ("": none).
	UserAgent string
	// Prepare, when set, adds to each request (a bearer, a principal in
	// the context) after the Requester's own headers.
	Prepare func(*http.Request)
	// OnTimeout, when set, is called once per phase that ran out of time.
	OnTimeout func()
	// OnStatus, when set, is called once per request sent: with the
	// response's status code in decimal, CodeTimeout, or CodeError.
	OnStatus func(code string)
	// Sizes, when set, are the sizes proven so far (shared by the caller's
	// Requesters): Outboard refuses an outboard that states another size
	// for a proven id, ProveSize answers from it without a request, and a
	// Body or ProveSize that verified an object's last group records its
	// size there.
	Sizes *verified.Sizes
}

// Do sends method to url, with a Range header when rng is not "", and waits
// at most Timeout for the response headers. A headers timeout is ErrTimeout;
// other failures are the transport's. The status is not checked (see
// Call.Expect). The caller closes the returned Call.
func (r *Requester) Do(ctx context.Context, method, url, rng string) (*Call, error) {
	ctx, cancel := context.WithCancel(ctx)
	wd := newWatchdog(r.timeout(), cancel)
	req, err := r.newRequest(ctx, method, url, rng)
	if err != nil {
		wd.disarm()
		cancel()
		return nil, err
	}
	resp, err := r.client().Do(req)
	wd.disarm()
	if err != nil {
		cancel()
		if wd.fired.Load() {
			r.status(CodeTimeout)
			r.timedOut()
			return nil, fmt.Errorf("%w: %v", ErrTimeout, err)
		}
		r.status(CodeError)
		return nil, err
	}
	r.status(strconv.Itoa(resp.StatusCode))
	return &Call{resp: resp, wd: wd, cancel: cancel, onTimeout: r.OnTimeout}, nil
}

// newRequest builds a request with the Requester's headers only.
func (r *Requester) newRequest(ctx context.Context, method, url, rng string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept-Encoding", "identity")
	if r.UserAgent != "" {
		req.Header.Set("User-Agent", r.UserAgent)
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	if r.Prepare != nil {
		r.Prepare(req)
	}
	return req, nil
}

func (r *Requester) client() *http.Client {
	if r.HTTP == nil {
		return http.DefaultClient
	}
	return r.HTTP
}

func (r *Requester) timeout() time.Duration {
	if r.Timeout <= 0 {
		return DefaultTimeout
	}
	return r.Timeout
}

func (r *Requester) status(code string) {
	if r.OnStatus != nil {
		r.OnStatus(code)
	}
}

func (r *Requester) timedOut() {
	if r.OnTimeout != nil {
		r.OnTimeout()
	}
}

// watchdog cancels a request when a phase (the headers, one group) takes
// longer than d. It is a runtime timer, not a goroutine.
type watchdog struct {
	d     time.Duration
	t     *time.Timer
	fired atomic.Bool
}

func newWatchdog(d time.Duration, cancel context.CancelFunc) *watchdog {
	w := &watchdog{d: d}
	w.t = time.AfterFunc(d, func() {
		w.fired.Store(true)
		cancel()
	})
	return w
}

// arm starts a new phase of at most d.
func (w *watchdog) arm() { w.t.Reset(w.d) }

// disarm ends the phase.
func (w *watchdog) disarm() { w.t.Stop() }
