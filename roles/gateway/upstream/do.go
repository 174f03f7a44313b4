package upstream

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/runtime"
)

// Call is one request to forward. Path is the upstream path, already escaped
// per segment by the caller.
type Call struct {
	Method, Path, RawQuery string
	// Header is already filtered with hygiene.ToUpstream by the caller. It is
	// not modified. X-Corr-ID is sent as found here: the caller sets it to
	// the request's correlation id. Authorization, X-Ron-Tenant and the
	// X-Forwarded-* headers are replaced by the link headers below.
	Header http.Header
	// Body is nil for none and is never re-read (so calls with a body are
	// never retried). Do never closes it; it is not read after the returned
	// response's body is closed or Do returned an error, apart from a read
	// the transport may still have in progress.
	Body          io.Reader
	ContentLength int64  // -1 unknown
	Tenant        string // sent as X-Ron-Tenant
	// ClientIP, Proto and Host are sent as X-Forwarded-For / -Proto / -Host.
	ClientIP, Proto, Host string
	// Prefix is sent as X-Forwarded-Prefix when non-empty (edge: "/edge").
	Prefix string
	// Deadline is absolute; zero means now + ForwardTimeout. It bounds the
	// time to the response headers; Request-Timeout is sent as the remaining
	// time. While a request body is still being sent, the upstream is held to
	// the progress limit instead (see Do).
	Deadline time.Time
	// Stream marks an event stream: no deadline after the headers and no
	// progress limit on the body.
	Stream bool
	// Attempts, when non-nil, is set to the number of attempts made (for
	// the access log).
	Attempts *int
}

// retryable reports whether c may be retried: GET or HEAD without a body.
func (c *Call) retryable() bool {
	return (c.Method == http.MethodGet || c.Method == http.MethodHead) && (c.Body == nil || c.Body == http.NoBody)
}

// Do forwards c and returns the upstream response (any status) with its body
// wrapped so that every read must make progress within ForwardTimeout, else
// the read fails with ErrStalled and ron_io_timeouts_total{op="forward"}
// counts it (not for Stream calls). The caller closes the body; closing it
// ends the call's context.
//
// Errors are *httpx.Error:
//   - 503 upstream_unavailable, Retry-After = remaining open time (≥ 1),
//     details.reason "breaker_open": the breaker is open; nothing is sent;
//   - 502 upstream_unavailable: the last attempt failed to connect or broke
//     the protocol (an in-process handler panicked before its headers);
//   - 504 timeout: the deadline (or the caller's own) passed;
//   - 503 upstream_unavailable "request canceled": ctx was cancelled (the
//     client left); the breaker does not count such an attempt;
//   - 500 internal: the link token could not be obtained, or Path/RawQuery
//     do not form a URL.
//
// GET and HEAD without a body are retried (docs/gateway.md §3.8) on a
// connect or protocol error, an attempt timeout, or a 502/503/504 answer, at
// most MaxAttempts attempts in all. Each attempt may take min(remaining
// deadline, ForwardTimeout); so an attempt timeout is retried only when the
// deadline lies further out. The pause before attempt n+1 is
// min(RetryCap, U[RetryBase, 2·RetryBase)·2^(n−1)), replaced by a larger
// upstream Retry-After; there is no retry when the pause would not end
// before the deadline. Each retry counts ron_backoff_retries_total
// {op="forward"}. When the attempts are spent on a 502/503/504 answer, that
// answer is returned (not an error). Every attempt counts
// ron_gateway_upstream_requests_total{upstream,code} (code "error" when no
// answer came); every timed-out attempt and stalled body counts
// ron_io_timeouts_total{op="forward"}.
//
// A call with a body is held to the deadline only while its body has been
// sent before it: while the upstream is still taking the body, each body read
// must follow the previous one within ForwardTimeout (time spent inside a
// read, waiting for the client, does not count), and once the body ended
// after the deadline the upstream has ForwardTimeout from then to answer.
func (l *Link) Do(ctx context.Context, c Call) (*http.Response, error) {
	p, err := l.prepare(ctx, &c, true)
	if err != nil {
		return nil, err
	}
	return l.run(ctx, &c, p.tmpl, p.deadline, p.pol, p.attempts)
}

// plan is what every attempt of one call shares.
type plan struct {
	pol      Policy
	deadline time.Time
	tmpl     *http.Request // nil unless asked for
	attempts int
}

// prepare fixes the call's policy, deadline, number of attempts and, when
// withTemplate, its request template; it fails when the deadline has
// already passed (504) or the template cannot be built.
func (l *Link) prepare(ctx context.Context, c *Call, withTemplate bool) (plan, error) {
	p := plan{pol: l.Policy(), attempts: 1}
	now := time.Now()
	p.deadline = c.Deadline
	if p.deadline.IsZero() {
		p.deadline = now.Add(p.pol.ForwardTimeout)
	}
	if !now.Before(p.deadline) {
		l.met.timeouts.Inc()
		return p, errTimeout()
	}
	if withTemplate {
		tmpl, err := l.template(ctx, c)
		if err != nil {
			return p, err
		}
		p.tmpl = tmpl
	}
	if c.retryable() {
		p.attempts = p.pol.MaxAttempts
	}
	return p, nil
}

// run makes the attempts of one call.
func (l *Link) run(ctx context.Context, c *Call, tmpl *http.Request, deadline time.Time, pol Policy, attempts int) (*http.Response, error) {
	for n := 1; ; n++ {
		if c.Attempts != nil {
			*c.Attempts = n
		}
		out := l.attempt(ctx, c, tmpl, deadline, pol)
		if !out.retry || n >= attempts {
			return out.resp, out.err
		}
		pause := max(l.backoff(n, pol), retryAfter(out.resp, time.Now()))
		if !time.Now().Add(pause).Before(deadline) {
			return out.resp, out.err
		}
		out.discard()
		l.met.retries.Inc()
		if !runtime.Sleep(ctx, pause) {
			return nil, l.callerGone(ctx)
		}
	}
}

// callerGone is the answer once ctx ended: cancel → 503, deadline → 504.
func (l *Link) callerGone(ctx context.Context) error {
	if ctx.Err() == context.Canceled {
		return errCanceled()
	}
	l.met.timeouts.Inc()
	return errTimeout()
}

func errTimeout() *httpx.Error {
	return httpx.NewError(http.StatusGatewayTimeout, httpx.CodeTimeout, "upstream timed out")
}

func errUnavailable() *httpx.Error {
	return httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "upstream unavailable")
}

func errCanceled() *httpx.Error {
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable, "request canceled")
}

func errInternal(msg string) *httpx.Error {
	return httpx.NewError(http.StatusInternalServerError, httpx.CodeInternal, "%s", msg)
}
