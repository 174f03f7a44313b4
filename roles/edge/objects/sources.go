package objects

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
	"github.com/ronhq/ron/store/verified/vfetch"
)

// attemptFunc tries one source once. done reports that the attempt settled
// the request (its answer began, or it failed after bytes went out), so no
// other source is tried; err is then the outcome. Otherwise err says why
// the source failed.
type attemptFunc func(ctx context.Context, src *Source) (done bool, err error)

// tally is what the failed sources said.
type tally struct {
	notFound, mismatch, timeout, other bool
}

// final is the answer when no source served the object: 502 with reason
// etag_invalid when some source's bytes did not verify, 502 for other
// failures, 504 when the sources only timed out (or 404ed), 404 when every
// source answered 404 (or there was none).
func (t tally) final() *httpx.Error {
	switch {
	case t.mismatch:
		return errUnavailable(true)
	case t.other:
		return errUnavailable(false)
	case t.timeout:
		return errTimedOut()
	}
	return errNotFound()
}

// trySources runs try on the storage source, then on up to MaxProviders
// providers of id, until one settles the request; each source is retried
// on a timeout, 503 or 504 while deadline (zero: none) allows. It returns
// the outcome: try's, or the tally's answer when every source failed, or
// 503 draining when ctx ended (shutdown, or the client of a stream left).
func (o *Objects) trySources(ctx context.Context, id store.ID, lim Limits, deadline func() time.Time, try attemptFunc) error {
	var t tally
	if src := o.opt.Storage; src != nil {
		if done, err := o.trySource(ctx, src, id, lim, deadline, try, &t); done {
			return err
		}
	}
	bases, err := o.providerBases(ctx, id, lim)
	if err != nil {
		if ctx.Err() != nil {
			return errDraining()
		}
		o.opt.Log.Debug().Err(err).Str("b3_prefix", id.Prefix()).Msg("provider lookup failed")
		t.other = true
	}
	for _, base := range bases {
		if done, err := o.trySource(ctx, o.providerSource(base), id, lim, deadline, try, &t); done {
			return err
		}
	}
	return t.final()
}

// trySource runs try on src up to lim.MaxTries times (retrying timeouts,
// 503 and 504 only) and notes the last failure in t.
func (o *Objects) trySource(ctx context.Context, src *Source, id store.ID, lim Limits, deadline func() time.Time,
	try attemptFunc, t *tally) (bool, error) {
	for n := 0; ; n++ {
		done, err := try(ctx, src)
		switch {
		case done:
			return true, err
		case ctx.Err() != nil:
			return true, errDraining()
		}
		if !retryable(err) || n+1 >= lim.MaxTries || !o.retryAllowed(ctx, n, deadline()) {
			if ctx.Err() != nil {
				return true, errDraining()
			}
			o.note(t, src, id, err)
			return false, nil
		}
	}
}

// retryAllowed sleeps before retry n unless that would pass deadline; false
// when no retry may follow.
func (o *Objects) retryAllowed(ctx context.Context, n int, deadline time.Time) bool {
	d := fillq.RetryDelay(n) // docs/edge.md §7.5
	if !deadline.IsZero() && time.Now().Add(d).After(deadline) {
		return false
	}
	o.met.retries.Inc()
	return runtime.Sleep(ctx, d)
}

// retryable: a timeout, 503 or 504.
func retryable(err error) bool {
	var se *vfetch.StatusError
	if errors.As(err, &se) {
		return se.Code == http.StatusServiceUnavailable || se.Code == http.StatusGatewayTimeout
	}
	return errors.Is(err, vfetch.ErrTimeout)
}

// note records a source's failure in t; a hash mismatch is counted
// (reason etag_invalid) and logged, and so is a source without outboards
// (a ron from before verified streaming: the log names the fix).
func (o *Objects) note(t *tally, src *Source, id store.ID, err error) {
	var se *vfetch.StatusError
	switch {
	case errors.As(err, &se) && se.Code == http.StatusNotFound:
		t.notFound = true
	case errors.Is(err, verified.ErrMismatch):
		t.mismatch = true
		o.mismatch(src, id, err)
	case errors.Is(err, vfetch.ErrTimeout):
		t.timeout = true
	case errors.Is(err, vfetch.ErrNoOutboard):
		t.other = true
		o.opt.Log.Warn().Err(err).Str("source", src.Name).Str("base", src.BaseURL).Str("b3_prefix", id.Prefix()).
			Msg("object source cannot be verified")
	default:
		t.other = true
		o.opt.Log.Debug().Err(err).Str("source", src.Name).Str("b3_prefix", id.Prefix()).Msg("object source failed")
	}
}

// mismatch counts and logs bytes of src that did not hash to id.
func (o *Objects) mismatch(src *Source, id store.ID, err error) {
	o.met.etagInvalid.Inc()
	o.opt.Log.Warn().Err(err).Str("source", src.Name).Str("base", src.BaseURL).Str("b3_prefix", id.Prefix()).
		Msg("object bytes failed verification")
}

// providerBases lists up to MaxProviders provider base URLs of id from the
// index, with a FillTimeout deadline on the lookup.
func (o *Objects) providerBases(ctx context.Context, id store.ID, lim Limits) ([]string, error) {
	if o.opt.Providers == nil || lim.MaxProviders == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, lim.FillTimeout)
	defer cancel()
	bases, err := o.opt.Providers(ctx, id)
	if err != nil {
		return nil, err
	}
	return bases[:min(len(bases), lim.MaxProviders)], nil
}

// providerSource is a provider as a source: the provider client, and only
// the bearer of ProviderToken (when not "").
func (o *Objects) providerSource(base string) *Source {
	return &Source{Name: "provider", BaseURL: strings.TrimSuffix(base, "/"), Client: o.providers,
		Prepare: o.providerAuth}
}

// providerAuth adds "Authorization: Bearer <ProviderToken()>" when there
// is a token.
func (o *Objects) providerAuth(req *http.Request) {
	if o.opt.ProviderToken == nil {
		return
	}
	if tok := o.opt.ProviderToken(); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
}
