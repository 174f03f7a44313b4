package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"syscall"

	"github.com/ronhq/ron/httpx"
)

// errAttemptTimeout marks an attempt that ran out of Timeout.
var errAttemptTimeout = errors.New("attempt timed out")

// callError is a failure without a usable HTTP response. It unwraps to its
// envelope (so httpx.AsError yields it) and to its cause (so errors.Is works
// with context.Canceled, syscall.ECONNREFUSED, ErrBreakerOpen, …).
type callError struct {
	env         *httpx.Error
	cause       error
	unreachable bool
	excluded    bool // the caller cancelled: not the target's fault
}

func (e *callError) Error() string   { return e.env.Error() + ": " + e.cause.Error() }
func (e *callError) Unwrap() []error { return []error{e.env, e.cause} }

// IsUnreachable reports whether err means the target could not be connected to
// at all (connection refused, no route, DNS failure, connect timeout). The CLI
// exits 2 on it.
func IsUnreachable(err error) bool {
	var ce *callError
	return errors.As(err, &ce) && ce.unreachable
}

// IsTimeout reports whether err is a timeout: an attempt or the caller's
// deadline ran out (envelope 504 timeout), or the target answered 408/504.
func IsTimeout(err error) bool {
	var he *httpx.Error
	return errors.As(err, &he) && he.Code == httpx.CodeTimeout
}

// transportError classifies an error from http.Client.Do (timedOut: the
// attempt's timer fired). It reports whether a retry may help; the error's
// excluded field tells the breaker to ignore the attempt.
func (c *Client) transportError(ctx context.Context, op string, err error, timedOut bool) (*callError, bool) {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // drop the URL: it may hold an object id
	}
	ce := &callError{cause: &opError{op: op, target: c.target, err: err}}
	ce.unreachable = isDialError(err) && ctx.Err() == nil
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		ce.env, ce.excluded = httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable, "request canceled"), true
		return ce, false
	case ctx.Err() != nil || timedOut:
		c.counter("ron_io_timeouts_total", op).Inc()
		ce.env = httpx.NewError(http.StatusGatewayTimeout, httpx.CodeTimeout, "upstream timed out")
		return ce, ctx.Err() == nil
	}
	ce.env = httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "upstream unreachable")
	return ce, true
}

// verdict is the breaker's view of a failed attempt.
func (e *callError) verdict() error {
	if e.excluded {
		return ErrAttemptExcluded
	}
	return ErrAttemptFailed
}

// opError names the operation and target of a transport failure.
type opError struct {
	op, target string
	err        error
}

func (e *opError) Error() string { return e.op + " " + e.target + ": " + e.err.Error() }
func (e *opError) Unwrap() error { return e.err }

func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)
}
