package upstream

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/gateway/gatewayapi"
)

// outcome is one attempt's result and whether a retry may help.
type outcome struct {
	resp  *http.Response
	err   error
	retry bool
}

// discard releases a response that will not be handed to the caller.
func (o outcome) discard() {
	if o.resp != nil {
		_ = o.resp.Body.Close()
	}
}

// attempt makes one breaker-guarded attempt.
func (l *Link) attempt(ctx context.Context, c *Call, tmpl *http.Request, deadline time.Time, pol Policy) outcome {
	done, err := l.br.Load().allow()
	if err != nil {
		return outcome{err: err}
	}
	actx, cancel := context.WithCancelCause(ctx)
	now := time.Now()
	limit := earlier(deadline, now.Add(pol.ForwardTimeout))
	req, body := l.request(actx, c, tmpl, deadline.Sub(now))
	wd := startWatchdog(now, limit, deadline, pol.ForwardTimeout, body != nil, cancel)
	if body != nil {
		body.wd = wd
	}
	resp, err := l.rt.RoundTrip(req)
	if !wd.Stop() && err == nil {
		_ = resp.Body.Close()
		err = context.Cause(actx)
	}
	if err != nil {
		cancel(nil)
		body.close()
		return l.failed(ctx, actx, c, err, done)
	}
	l.met.attempt(resp.StatusCode)
	done(statusVerdict(resp.StatusCode))
	resp.Body = l.wrapBody(resp.Body, actx, cancel, c.Stream, pol.ForwardTimeout, body)
	return outcome{resp: resp, retry: retryStatus(resp.StatusCode)}
}

// earlier returns the earlier of a and b.
func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// request clones the template for one attempt under actx (plus the link
// principal in-process), with Request-Timeout and the call's body.
func (l *Link) request(actx context.Context, c *Call, tmpl *http.Request, remaining time.Duration) (*http.Request, *requestBody) {
	rctx := actx
	if l.inProcess {
		rctx = auth.WithClaims(actx, l.principal)
	}
	req := tmpl.Clone(rctx)
	req.Header.Set(gatewayapi.HeaderRequestTimeout, requestTimeout(remaining))
	if c.Body == nil || c.Body == http.NoBody {
		return req, nil
	}
	if c.ContentLength == 0 {
		req.Body, req.ContentLength = http.NoBody, 0
		return req, nil
	}
	body := &requestBody{r: c.Body, want: max(c.ContentLength, -1)}
	req.Body, req.ContentLength = body, body.want
	return req, body
}

// failed classifies an attempt that got no response.
func (l *Link) failed(ctx, actx context.Context, c *Call, err error, done func(error)) outcome {
	l.met.attempt(0)
	cause := context.Cause(actx)
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		done(errExcluded)
		return outcome{err: errCanceled()}
	case ctx.Err() != nil || errors.Is(cause, errDeadline):
		done(errFailed)
		l.met.timeouts.Inc()
		return outcome{err: errTimeout()}
	case errors.Is(cause, errAttemptTimeout):
		done(errFailed)
		l.met.timeouts.Inc()
		return outcome{err: errTimeout(), retry: true}
	}
	done(errFailed)
	l.log.Debug().Str("upstream", l.name).Str("method", c.Method).Err(withoutURL(err)).Msg("upstream attempt failed")
	return outcome{err: errUnavailable(), retry: true}
}

// withoutURL drops the URL of a transport error: it may hold an object id.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// retryStatus: 502, 503 and 504 answers may be retried.
func retryStatus(status int) bool {
	switch status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}
