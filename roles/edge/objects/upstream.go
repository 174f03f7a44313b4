package objects

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

// Errors of one upstream attempt, besides store/verified's.
var (
	// errTimeout: no response headers, or no 64 KiB of body, within
	// FillTimeout.
	errTimeout = errors.New("objects: source made no progress within fill_timeout")
	// errProtocol: the answer is framed wrongly (Content-Length or
	// Content-Range not those of the request, no Content-Length in-process).
	errProtocol = errors.New("objects: source answer framed wrongly")
)

// userAgent identifies the edge's upstream requests.
const userAgent = "ron-edge"

// statusError is a source answer with an unexpected status.
type statusError struct{ code int }

func (e *statusError) Error() string { return "source answered " + strconv.Itoa(e.code) }

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

func (w *watchdog) arm()    { w.t.Reset(w.d) }
func (w *watchdog) disarm() { w.t.Stop() }

// call is one source request whose response headers arrived.
type call struct {
	o      *Objects
	resp   *http.Response
	wd     *watchdog
	cancel context.CancelFunc
}

// do sends method to src's base + path, with an optional Range, and waits at
// most timeout for the response headers. The request carries no header of
// the client's: only Accept-Encoding: identity, a User-Agent, Range, and
// what src.Prepare adds. The caller closes the call.
func (o *Objects) do(ctx context.Context, src *Source, method, path, rng string, timeout time.Duration) (*call, error) {
	ctx, cancel := context.WithCancel(ctx)
	wd := newWatchdog(timeout, cancel)
	req, err := http.NewRequestWithContext(ctx, method, src.BaseURL+path, nil)
	if err != nil {
		wd.disarm()
		cancel()
		return nil, err
	}
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("User-Agent", userAgent)
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	if src.Prepare != nil {
		src.Prepare(req)
	}
	client := src.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	wd.disarm()
	if err != nil {
		cancel()
		if wd.fired.Load() {
			o.met.timeouts.Inc()
			return nil, fmt.Errorf("%w: %v", errTimeout, err)
		}
		return nil, err
	}
	return &call{o: o, resp: resp, wd: wd, cancel: cancel}, nil
}

// close releases the response and its timer.
func (c *call) close() {
	c.wd.disarm()
	c.resp.Body.Close()
	c.cancel()
}

// read runs one progress phase (a chunk, a block of the list) under the
// watchdog, turning its expiry into errTimeout.
func (c *call) read(phase func() error) error {
	c.wd.arm()
	err := phase()
	c.wd.disarm()
	if err != nil && c.wd.fired.Load() {
		c.o.met.timeouts.Inc()
		return fmt.Errorf("%w: %v", errTimeout, err)
	}
	return err
}

// expect checks the status; a mismatch drains a little of the body (so the
// connection can be reused) and is a *statusError.
func (c *call) expect(status int) error {
	if c.resp.StatusCode == status {
		return nil
	}
	_ = c.read(func() error {
		_, err := io.CopyN(io.Discard, c.resp.Body, 4096)
		return err
	})
	return &statusError{code: c.resp.StatusCode}
}
