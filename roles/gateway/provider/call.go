package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Errors an attempt can end with, besides the verified package's.
var (
	// errTimeout: the provider gave no headers, or no chunk, within Timeout.
	errTimeout = errors.New("provider: no progress within the timeout")
)

// statusError is a provider answer with an unexpected status.
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("provider answered %d", e.code) }

// breakerFailure reports whether the status counts against the provider's
// breaker: 500, 502, 503 and 504 do (spec/gateway.md §3.8).
func (e *statusError) breakerFailure() bool {
	switch e.code {
	case http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// watchdog cancels a request when a phase (the headers, one chunk) takes
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

// call is one provider request whose response headers arrived.
type call struct {
	resp   *http.Response
	wd     *watchdog
	cancel context.CancelFunc
}

// close releases the response and its timer.
func (c *call) close() {
	c.wd.disarm()
	c.resp.Body.Close()
	c.cancel()
}

// read runs one progress phase (a chunk, a block of the list) under the
// watchdog, turning its expiry into errTimeout.
func (c *call) read(f *Fetcher, phase func() error) error {
	c.wd.arm()
	err := phase()
	c.wd.disarm()
	if err != nil && c.wd.fired.Load() {
		f.met.timeouts.Inc()
		return fmt.Errorf("%w: %v", errTimeout, err)
	}
	return err
}

// do sends method to url with an optional Range and waits at most Timeout
// for the response headers. The request carries no credentials or forwarded
// headers. The caller closes the returned call.
func (f *Fetcher) do(ctx context.Context, method, url, rng string) (*call, error) {
	ctx, cancel := context.WithCancel(ctx)
	wd := newWatchdog(f.timeoutNow(), cancel)
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		wd.disarm()
		cancel()
		return nil, err
	}
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("User-Agent", "ron-gateway")
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := f.http.Do(req)
	wd.disarm()
	if err != nil {
		cancel()
		if wd.fired.Load() {
			f.met.request(codeTimeout)
			f.met.timeouts.Inc()
			return nil, fmt.Errorf("%w: %v", errTimeout, err)
		}
		f.met.request(codeError)
		return nil, err
	}
	f.met.request(strconv.Itoa(resp.StatusCode))
	return &call{resp: resp, wd: wd, cancel: cancel}, nil
}

// expect checks the status; a mismatch drains a little of the body (so the
// connection can be reused; under the watchdog, a stalled body cannot hold
// the caller) and is a *statusError.
func (c *call) expect(status int) error {
	if c.resp.StatusCode == status {
		return nil
	}
	c.wd.arm()
	_, _ = io.CopyN(io.Discard, c.resp.Body, 4096)
	c.wd.disarm()
	return &statusError{code: c.resp.StatusCode}
}
