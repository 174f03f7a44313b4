package vfetch

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// drainBytes is how much of an unexpected answer's body Expect reads, so
// that a short error body leaves the connection reusable.
const drainBytes = 4096

// Call is one request whose response headers arrived. It is not safe for
// concurrent use.
type Call struct {
	resp      *http.Response
	wd        *watchdog
	cancel    context.CancelFunc
	onTimeout func()
}

// Response is the answer. Its body is read through Read phases only, so
// that a stalled source cannot hold the caller.
func (c *Call) Response() *http.Response { return c.resp }

// ContentType is the answer's Content-Type as MediaType accepts it.
func (c *Call) ContentType() string { return MediaType(c.resp.Header.Get("Content-Type")) }

// Close releases the response, its timer and its context. Idempotent.
func (c *Call) Close() {
	c.wd.disarm()
	c.resp.Body.Close()
	c.cancel()
}

// Read runs one progress phase (a group, a block of the outboard) of at most
// the Requester's Timeout. When the phase fails because it ran out of time
// (the request was cancelled), the error wraps ErrTimeout and OnTimeout is
// called.
func (c *Call) Read(phase func() error) error {
	c.wd.arm()
	err := phase()
	c.wd.disarm()
	if err != nil && c.wd.fired.Load() {
		if c.onTimeout != nil {
			c.onTimeout()
		}
		return fmt.Errorf("%w: %v", ErrTimeout, err)
	}
	return err
}

// Expect returns nil when the answer has status; otherwise it reads up to
// 4 KiB of the body (in one phase: a stalled body cannot hold the caller)
// and returns a *StatusError. The call stays open either way.
func (c *Call) Expect(status int) error {
	if c.resp.StatusCode == status {
		return nil
	}
	_ = c.Read(func() error {
		_, err := io.CopyN(io.Discard, c.resp.Body, drainBytes)
		return err
	})
	return &StatusError{Code: c.resp.StatusCode}
}
