package objects

import (
	"context"
	"errors"
	"net/http"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/store/verified"
)

// errBadID is the answer to an id that is not b3: and 64 lowercase hex.
func errBadID() error {
	return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest,
		"object id must be b3: followed by 64 lowercase hex digits")
}

// errNotFound: every source answered 404, or there is no source.
func errNotFound() *httpx.Error {
	return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no source holds the object")
}

// errUnavailable: the sources failed; reason etag_invalid when a source's
// bytes did not hash to the id.
func errUnavailable(mismatch bool) *httpx.Error {
	e := httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "no source served the object")
	if mismatch {
		e = httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable,
			"the source's bytes do not hash to the object id").WithDetails(map[string]any{"reason": ReasonEtagInvalid})
	}
	return e
}

// errTimedOut: the sources, or the request's deadline, timed out.
func errTimedOut() *httpx.Error {
	return httpx.NewError(http.StatusGatewayTimeout, httpx.CodeTimeout, "the object fill timed out")
}

// errDraining: the work queue is closed for shutdown, or the fill was
// aborted by it.
func errDraining() *httpx.Error {
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeDraining, "the edge is shutting down")
}

// errBusy: the work queue is full (429, Retry-After 1).
func errBusy() *httpx.Error {
	return httpx.NewError(http.StatusTooManyRequests, httpx.CodeBusy, "the fill queue is full").WithRetryAfter(1)
}

// errCache: the cache refused a fill.
func errCache(err error) *httpx.Error {
	if errors.Is(err, edgecache.ErrClosed) {
		return errDraining()
	}
	return httpx.NewError(http.StatusInternalServerError, httpx.CodeInternal, "the edge cache failed")
}

// submitError maps a fillq refusal (Submit or Dropped) to its answer.
func submitError(err error) *httpx.Error {
	switch {
	case errors.Is(err, fillq.ErrBusy):
		return errBusy()
	case errors.Is(err, fillq.ErrExpired):
		return errTimedOut()
	}
	return errDraining()
}

// ctxError is the answer when the request's context ended first: 504
// timeout for a deadline, else the context's error (the client is gone).
func ctxError(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errTimedOut()
	}
	return ctx.Err()
}

// answerError maps what a follower read returned (the abort error of the
// fill, normally already an *httpx.Error) to an answer.
func answerError(ctx context.Context, err error) error {
	var he *httpx.Error
	switch {
	case errors.As(err, &he):
		return he
	case ctx.Err() != nil:
		return ctxError(ctx)
	case errors.Is(err, edgecache.ErrMismatch), errors.Is(err, verified.ErrMismatch):
		return errUnavailable(true)
	}
	return errUnavailable(false)
}
