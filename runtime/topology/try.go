package topology

import (
	"context"
	"errors"
	"net/http"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
)

// NoMember is the error of a call to role when the pool holds no alive
// member: 503 upstream_unavailable, Retry-After 1, details.reason
// "no_member" and details.upstream role.
func NoMember(role string) error {
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeUpstreamUnavailable, "no alive %s member", role).
		WithRetryAfter(1).WithDetails(map[string]any{"reason": "no_member", "upstream": role})
}

// Try calls the members of p in Ranked(key) order until one succeeds, an
// error is final (again(err) is false) or ctx ends, and returns that
// result; when every member failed, the last error. With no member it
// fails with NoMember.
func Try[T, R any](ctx context.Context, p *Pool[T], key []byte, again func(error) bool, call func(T) (R, error)) (R, error) {
	var zero R
	es := p.Ranked(key)
	if len(es) == 0 {
		return zero, NoMember(p.opt.Role)
	}
	var err error
	for _, e := range es {
		var r R
		if r, err = call(e.Value); err == nil || ctx.Err() != nil || !again(err) {
			return r, err
		}
	}
	return zero, err
}

// ReadAgain reports whether a read (or an idempotent write) that failed
// with err may be asked of another member: no answer, 408, 429 or 5xx.
// Other 4xx answers are final.
func ReadAgain(err error) bool {
	s := httpx.AsError(err).Status
	return s >= http.StatusInternalServerError || s == http.StatusTooManyRequests || s == http.StatusRequestTimeout
}

// WriteAgain reports whether a write that failed with err certainly did
// not reach the member (it could not be connected to, or its breaker was
// open), so sending it to another member cannot apply it twice.
func WriteAgain(err error) bool {
	return client.IsUnreachable(err) || errors.Is(err, client.ErrBreakerOpen)
}
