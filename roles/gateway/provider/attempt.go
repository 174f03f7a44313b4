package provider

import (
	"context"
	"errors"
	"net/http"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
	"github.com/ronhq/ron/store/verified/vfetch"
)

// Attempt outcomes that are not the provider's fault.
var (
	// errClient: writing to the client failed (gone, or stalled past Timeout).
	errClient = errors.New("provider: client write failed")
	// errTooLarge: the object is larger than ReadAll's limit.
	errTooLarge = errors.New("provider: object too large")
)

// attempt is one read from one provider, accounted to its breaker once.
type attempt struct {
	f    *Fetcher
	ctx  context.Context
	base string
	id   store.ID
	done func(error)
}

// begin asks base's breaker for an attempt; an open breaker refuses.
func (f *Fetcher) begin(ctx context.Context, base string, id store.ID) (*attempt, bool) {
	done, err := f.health.breakerFor(base).Allow()
	if err != nil {
		return nil, false
	}
	return &attempt{f: f, ctx: ctx, base: base, id: id, done: done}, true
}

// end reports the attempt's outcome to the breaker. A failed verification
// (a group that does not verify against the id, or an invalid outboard)
// also marks the provider bad for BadFor; a mismatch is counted. A provider
// without outboards (a ron from before verified streaming) is a breaker
// failure, logged with the fix.
func (a *attempt) end(err error) {
	var se *vfetch.StatusError
	switch {
	case err == nil, errors.Is(err, errTooLarge), errors.As(err, new(*httpx.Error)):
		a.done(nil)
	case errors.Is(err, verified.ErrMismatch):
		a.f.met.mismatch.Inc()
		a.fail(err, true, "provider bytes failed verification; marked bad")
	case errors.Is(err, verified.ErrBadOutboard):
		a.fail(err, true, "provider sent an invalid outboard; marked bad")
	case errors.Is(err, vfetch.ErrNoOutboard):
		a.fail(err, false, "provider runs a ron without outboards; skipped until upgraded")
	case a.ctx.Err() != nil, errors.Is(err, errClient):
		a.done(errExcluded)
	case errors.As(err, &se) && !breakerFailure(se.Code):
		a.done(nil)
	default:
		a.done(err)
	}
}

// fail logs a provider's failure, marks it bad when asked, and counts it
// against its breaker.
func (a *attempt) fail(err error, bad bool, msg string) {
	if bad {
		a.f.health.markBad(a.base)
	}
	a.f.log.Warn().Str("provider", a.base).Str("b3_prefix", a.id.Prefix()).Err(err).Msg(msg)
	a.done(err)
}

// failed is the answer when every provider failed: 502
// upstream_unavailable, details.reason "hash_mismatch" when some provider's
// bytes failed verification, else "no_provider".
func failed(mismatch bool) error {
	reason := "no_provider"
	if mismatch {
		reason = "hash_mismatch"
	}
	return httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "no provider served the object verified").
		WithDetails(map[string]any{"reason": reason})
}

// ctxError is the answer when the caller's context ended first: 504 timeout
// for a deadline, else the context's error (the client is gone).
func ctxError(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return httpx.NewError(http.StatusGatewayTimeout, httpx.CodeTimeout, "deadline exceeded reading from providers")
	}
	return ctx.Err()
}
