package provider

import (
	"context"
	"net/http"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/content"
	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/store"
)

// serveHead answers HEAD from the first provider answering 200 to HEAD
// /o/{b3} with a Content-Length.
func (f *Fetcher) serveHead(ctx context.Context, w http.ResponseWriter, r *http.Request, id store.ID, providers []string, set http.Header) error {
	for _, base := range f.Filter(providers, "") {
		a, ok := f.begin(ctx, base, id)
		if !ok {
			continue
		}
		size, ctype, err := f.req().Head(ctx, base, id)
		a.end(err)
		if err == nil {
			return writeHead(w, r, id, size, ctype, set)
		}
		if ctx.Err() != nil {
			return ctxError(ctx)
		}
	}
	return failed(false)
}

// writeHead writes the HEAD answer: 200 or 304, or returns 412.
func writeHead(w http.ResponseWriter, r *http.Request, id store.ID, size int64, ctype string, set http.Header) error {
	plan := ranges.NewPlan(r, size, content.ETag(id), ctype, 1)
	if plan.Status == http.StatusPreconditionFailed {
		return httpx.NewError(http.StatusPreconditionFailed, httpx.CodePreconditionFailed, "If-Match did not match")
	}
	h := w.Header()
	content.SetObject(h, content.ETag(id))
	if plan.Status == http.StatusNotModified {
		applySet(h, set, true)
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	if v := set.Get("Content-Type"); v != "" {
		ctype = v
	}
	plan.SetHeaders(h, size, ctype)
	applySet(h, set, false)
	w.WriteHeader(plan.Status)
	return nil
}
