package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
)

// ReadAll returns the whole object id, every 64 KiB group verified against
// the id, and its provider Content-Type (as Serve would send it), from the
// first of providers (filtered again, in order) that serves it. Used by /n
// for manifests.
//
// A provider whose outboard states more than max bytes is passed over (not
// marked bad: the size is proven only by the last group); when that happened
// and no other provider failed verification, the answer is 502 malformed
// with details {"reason":"too_large","max":max}. Every other failure is as
// Serve's: 502 upstream_unavailable (reason "hash_mismatch" or
// "no_provider"), 504 timeout on ctx's deadline, ctx's error when cancelled.
func (f *Fetcher) ReadAll(ctx context.Context, id store.ID, providers []string, max int64) ([]byte, string, error) {
	mismatch, tooLarge := false, false
	for _, base := range f.Filter(providers, "") {
		a, ok := f.begin(ctx, base, id)
		if !ok {
			continue
		}
		b, ctype, err := f.readAll(ctx, base, id, max)
		a.end(err)
		if err == nil {
			return b, ctype, nil
		}
		if ctx.Err() != nil {
			return nil, "", ctxError(ctx)
		}
		mismatch = mismatch || errors.Is(err, verified.ErrMismatch)
		tooLarge = tooLarge || errors.Is(err, errTooLarge)
	}
	if tooLarge && !mismatch {
		return nil, "", httpx.NewError(http.StatusBadGateway, httpx.CodeMalformed, "object larger than %d bytes", max).
			WithDetails(map[string]any{"reason": "too_large", "max": max})
	}
	return nil, "", failed(mismatch)
}

// readAll reads id whole from one provider.
func (f *Fetcher) readAll(ctx context.Context, base string, id store.ID, max int64) ([]byte, string, error) {
	t, err := f.req().Outboard(ctx, base, id)
	if err != nil {
		return nil, "", err
	}
	if t.Size > max {
		return nil, "", fmt.Errorf("%w: %d bytes, limit %d", errTooLarge, t.Size, max)
	}
	b, err := f.req().Open(ctx, base, t, 0, t.Count()-1)
	if err != nil {
		return nil, "", err
	}
	defer b.Close()
	out := make([]byte, 0, t.Size)
	for {
		group, err := b.Next()
		if err == io.EOF {
			return out, b.ContentType, nil
		}
		if err != nil {
			return nil, "", err
		}
		out = append(out, group...)
	}
}
