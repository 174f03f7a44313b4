package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ronhq/ron/runtime"

	"github.com/ronhq/ron/httpx"
)

// Retry says whether a call may be retried.
type Retry int8

const (
	// RetryByMethod retries GET, HEAD, OPTIONS, PUT and DELETE; not POST/PATCH.
	RetryByMethod Retry = iota
	// RetryIdempotent: the caller vouches the call is idempotent (e.g. a POST
	// that only reads).
	RetryIdempotent
	// RetryNever makes one attempt only.
	RetryNever
)

// Request is one call. Path is appended to the Client's BaseURL path.
type Request struct {
	Method string // default GET
	Path   string
	Query  url.Values
	Header http.Header
	// Body is sent as is and closed if it is an io.Closer. A call with a body
	// is retried only when a fresh copy can be made: Body is a *bytes.Reader,
	// *bytes.Buffer or *strings.Reader, or GetBody is set.
	Body    io.Reader
	GetBody func() (io.ReadCloser, error)
	// ContentLength, when > 0, is sent for bodies whose length Go cannot see.
	ContentLength int64
	Retry         Retry
	// Op is the op label of the metrics: a route template such as
	// "GET /o/{b3}", never a raw path. Default: the method.
	Op string
	// AcceptStatus lists non-2xx statuses returned as responses (e.g. 304,
	// 404) instead of errors. They are never retried.
	AcceptStatus []int
	// Validate, when set, reads and checks an accepted response (2xx or in
	// AcceptStatus) before the breaker hears of the attempt. Its error counts
	// as a breaker failure (unless the caller cancelled ctx meanwhile) and is
	// returned by Do unchanged, never retried. Do closes the body after
	// Validate; the response it returns then has an empty body.
	Validate func(resp *http.Response) error
}

// maxErrorBody bounds how much of an error response is read to decode it.
const maxErrorBody = 64 << 10

// call is a prepared Request.
type call struct {
	tmpl     *http.Request
	op       string
	retries  int
	accept   []int
	validate func(*http.Response) error
}

// Do sends req and returns the response for 2xx statuses and those in
// req.AcceptStatus; the caller must close its body. The attempt timeout ends
// when the headers arrive; ctx bounds the rest.
//
// Other statuses are returned as *httpx.Error decoded from the envelope
// (Retry-After header included). Idempotent calls are retried on connection
// errors, attempt timeouts, 429, 502, 503 and 504, waiting a jittered,
// doubling backoff (or Retry-After when longer; a Retry-After beyond the
// backoff cap stops retrying), never past ctx's deadline. Failures without a
// response unwrap to an *httpx.Error too: 502 upstream_unavailable (see
// IsUnreachable), 504 timeout, 503 upstream_unavailable when the breaker is
// open (wrapping ErrBreakerOpen) or when ctx was cancelled (wrapping
// context.Canceled).
func (c *Client) Do(ctx context.Context, req *Request) (*http.Response, error) {
	cl, err := c.newCall(ctx, req)
	if err != nil {
		return nil, err
	}
	for n := 0; ; n++ {
		resp, retry, err := c.attempt(ctx, cl, n)
		if err == nil {
			return resp, nil
		}
		if !retry || n >= cl.retries || !c.wait(ctx, n, err) {
			return nil, err
		}
		c.counter("ron_backoff_retries_total", cl.op).Inc()
	}
}

func (c *Client) newCall(ctx context.Context, req *Request) (*call, error) {
	if c.baseErr != nil {
		return nil, c.baseErr
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	hreq, err := http.NewRequestWithContext(ctx, method, c.url(req), req.Body)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	for k, v := range req.Header {
		hreq.Header[k] = slices.Clone(v)
	}
	if req.GetBody != nil {
		hreq.GetBody = req.GetBody
	}
	if req.ContentLength > 0 && hreq.ContentLength == 0 && req.Body != nil {
		hreq.ContentLength = req.ContentLength
	}
	if err := c.authorize(ctx, hreq); err != nil {
		return nil, err
	}
	cl := &call{tmpl: hreq, op: req.Op, accept: req.AcceptStatus, validate: req.Validate}
	if cl.op == "" {
		cl.op = method
	}
	if idempotent(method, req.Retry) && rewindable(hreq) {
		cl.retries = c.opt.Retries
	}
	return cl, nil
}

func (c *Client) url(req *Request) string {
	u := *c.base
	p := req.Path
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + p
	u.RawPath, u.RawQuery, u.Fragment = "", req.Query.Encode(), ""
	return u.String()
}

func (c *Client) authorize(ctx context.Context, r *http.Request) error {
	if c.opt.Token == nil {
		return nil
	}
	tok, err := c.opt.Token(ctx)
	if err != nil {
		return fmt.Errorf("client: token: %w", err)
	}
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	return nil
}

func idempotent(method string, r Retry) bool {
	switch r {
	case RetryIdempotent:
		return true
	case RetryNever:
		return false
	}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

func rewindable(r *http.Request) bool {
	return r.Body == nil || r.Body == http.NoBody || r.GetBody != nil
}

// request returns attempt n's request: the template's body first, fresh
// copies from GetBody afterwards.
func (cl *call) request(ctx context.Context, n int) (*http.Request, error) {
	r := cl.tmpl.Clone(ctx)
	if n > 0 && cl.tmpl.GetBody != nil {
		body, err := cl.tmpl.GetBody()
		if err != nil {
			return nil, fmt.Errorf("client: rewind body: %w", err)
		}
		r.Body = body
	}
	return r, nil
}

// try holds one attempt's context, timer and breaker callback.
type try struct {
	cancel context.CancelCauseFunc
	timer  *time.Timer
	done   func(error)
}

// attempt makes one breaker-guarded attempt. It returns the response to hand
// to the caller, or the error and whether retrying may help.
func (c *Client) attempt(ctx context.Context, cl *call, n int) (*http.Response, bool, error) {
	done, err := c.breaker.Allow()
	if err != nil {
		return nil, false, c.breakerError(err)
	}
	actx, cancel := context.WithCancelCause(ctx)
	t := &try{cancel: cancel, done: done}
	t.timer = time.AfterFunc(c.opt.Timeout, func() { cancel(errAttemptTimeout) })
	hreq, err := cl.request(actx, n)
	if err != nil {
		t.timer.Stop()
		cancel(nil)
		done(ErrAttemptExcluded)
		return nil, false, err
	}
	resp, err := c.http.Do(hreq)
	timedOut := !t.timer.Stop()
	if err == nil && timedOut {
		resp.Body.Close()
		err = errAttemptTimeout
	}
	if err != nil {
		cancel(nil)
		ce, retry := c.transportError(ctx, cl.op, err, timedOut)
		done(ce.verdict())
		return nil, retry, ce
	}
	return c.finish(ctx, t, cl, resp)
}

// finish hands over an accepted response or turns it into an *httpx.Error.
func (c *Client) finish(ctx context.Context, t *try, cl *call, resp *http.Response) (*http.Response, bool, error) {
	accepted := resp.StatusCode/100 == 2 || slices.Contains(cl.accept, resp.StatusCode)
	if accepted && cl.validate != nil {
		return c.validated(ctx, t, cl, resp)
	}
	t.done(c.statusVerdict(resp.StatusCode))
	if accepted {
		resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: t.cancel}
		return resp, false, nil
	}
	// The error body is read under ctx only: the attempt timer was stopped.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	t.cancel(nil)
	he := httpx.DecodeError(resp.StatusCode, body)
	if secs, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
		he.RetryAfter = secs
	}
	return nil, transientStatus(resp.StatusCode), he
}

func transientStatus(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// validated runs the call's Validate on an accepted response and tells the
// breaker: success, failure, or nothing when the caller cancelled.
func (c *Client) validated(ctx context.Context, t *try, cl *call, resp *http.Response) (*http.Response, bool, error) {
	err := cl.validate(resp)
	resp.Body.Close()
	t.cancel(nil)
	switch {
	case err == nil:
		t.done(c.statusVerdict(resp.StatusCode))
		resp.Body = http.NoBody
		return resp, false, nil
	case errors.Is(ctx.Err(), context.Canceled):
		t.done(ErrAttemptExcluded)
	default:
		t.done(ErrAttemptFailed)
	}
	return nil, false, err
}

// parseRetryAfter is RetryAfter rounded up to whole seconds (the
// httpx.Error's RetryAfter).
func parseRetryAfter(v string, now time.Time) (int, bool) {
	d, ok := RetryAfter(v, now)
	return int((d + time.Second - 1) / time.Second), ok
}

// wait sleeps before retry n+1. It returns false, without sleeping, when the
// server's Retry-After exceeds the backoff cap or the wait would reach ctx's
// deadline, and false when ctx ends during the wait.
func (c *Client) wait(ctx context.Context, n int, err error) bool {
	d := c.backoff(n)
	var he *httpx.Error
	if errors.As(err, &he) && !isCallError(err) && he.RetryAfter > 0 {
		ra := time.Duration(he.RetryAfter) * time.Second
		if ra > c.opt.BackoffCap {
			return false
		}
		d = max(d, ra)
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Add(d).Before(dl) {
		return false
	}
	return runtime.Sleep(ctx, d)
}

// backoff returns the wait before retry n+1 (RetryPause).
func (c *Client) backoff(n int) time.Duration {
	return RetryPause{Base: c.opt.BackoffBase, Cap: c.opt.BackoffCap}.Pause(n, rand.Float64())
}

func isCallError(err error) bool {
	var ce *callError
	return errors.As(err, &ce)
}

// cancelOnClose releases the attempt's context when the body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}
