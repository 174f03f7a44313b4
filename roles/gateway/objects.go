package gateway

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/content"
	"github.com/ronhq/ron/roles/gateway/upstream"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/store"
)

// serveObject answers GET|HEAD /o/{b3} (docs/gateway.md §4).
func (r *Role) serveObject(c echo.Context, cl *call) error {
	id, err := objectParam(rawSegments(c.Request())[1])
	if err != nil {
		return err
	}
	return r.serveID(c.Response(), c.Request(), cl, id, nil)
}

// serveID answers GET|HEAD req with id's bytes: a local 304 when
// If-None-Match names id, else storage, else (on 404 or failure, when an
// index is available) verified reads from the index's providers. set
// replaces generated response headers (the /n Content-Type and
// Cache-Control).
func (r *Role) serveID(w http.ResponseWriter, req *http.Request, cl *call, id store.ID, set http.Header) error {
	if content.ETagMatches(req.Header.Get("If-None-Match"), id) {
		h := w.Header()
		h.Set("ETag", content.ETag(id))
		h.Set("Cache-Control", content.Immutable)
		for k, v := range set {
			if k == "Cache-Control" {
				h[k] = v
			}
		}
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	var storageErr error // storage's failure, answered when no provider can help
	link, tried := r.ups.linkURL(storageapi.RoleName, id[:])
	if link != nil {
		var keep func(int) bool // storage's answer, unless the providers may have the object
		if r.ups.indexClient != nil {
			keep = notProviderStatus
		}
		served, status, err := r.pass(w, req, cl, link, objectPath(id), passing{set: set, keep: keep})
		if served || !r.tryProviders(status, err) {
			return r.passed(w, req, cl, served, err)
		}
		storageErr = storageFailure(status, err)
	}
	urls, err := r.providers(req.Context(), cl, id, tried)
	if err != nil {
		if storageErr != nil && httpx.AsError(err).Status == http.StatusNotFound {
			return storageErr // storage failed and nobody else has it: not a 404
		}
		return err
	}
	// No overall deadline on the body: the fetcher bounds the time to each
	// provider's headers and every chunk's progress (docs/gateway.md §3.8).
	return r.fetch.Serve(req.Context(), w, req, id, urls, set)
}

// tryProviders reports whether a storage answer that was not served (a
// declined status, or err) sends the read on to the index's providers: a
// 404 or a failure, when there is an index.
func (r *Role) tryProviders(status int, err error) bool {
	if err != nil {
		status = httpx.AsError(err).Status
	}
	return r.ups.indexClient != nil && storageMissed(status)
}

// storageFailure is the answer for a storage read that failed (err, or a
// declined 5xx status) when no provider has the object; nil after a 404.
func storageFailure(status int, err error) error {
	switch {
	case err != nil:
		return err
	case status >= 500:
		e := httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "storage answered %d and no provider has the object", status)
		if status == http.StatusServiceUnavailable {
			e = httpx.NewError(status, httpx.CodeUpstreamUnavailable, "storage is unavailable and no provider has the object").WithRetryAfter(1)
		}
		return e
	}
	return nil
}

// notProviderStatus keeps a storage answer that providers cannot improve on.
func notProviderStatus(status int) bool { return !storageMissed(status) }

// storageMissed reports whether a storage status lets providers try: 404
// and every failure (5xx).
func storageMissed(status int) bool {
	return status == http.StatusNotFound || status >= http.StatusInternalServerError
}

// providers lists the usable provider URLs of id, without tried (the
// storage URL already asked): 404 when the index knows none (or none is
// usable), the index's error when it fails.
func (r *Role) providers(ctx context.Context, cl *call, id store.ID, tried string) ([]string, error) {
	if r.ups.indexClient == nil {
		return nil, httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "object not found")
	}
	ctx, cancel := context.WithDeadline(ctx, cl.deadline)
	defer cancel()
	list, err := r.ups.indexClient.Providers(ctx, id, r.opt.Node.Zone, 0)
	if err != nil {
		return nil, err
	}
	urls := r.fetch.Filter(providerURLs(list), tried)
	if len(urls) == 0 {
		return nil, httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "object not found: no usable provider")
	}
	return urls, nil
}

// providerURLs extracts the base URLs of a provider list, in order.
func providerURLs(l indexapi.ProviderList) []string {
	out := make([]string, 0, len(l.Providers))
	for _, p := range l.Providers {
		out = append(out, p.Addr)
	}
	return out
}

// objectPath is storage's path of id, "/o/b3:<hex>", built in one
// allocation (it is on every object read).
func objectPath(id store.ID) string {
	const prefix = "/o/b3:"
	var b strings.Builder
	b.Grow(len(prefix) + 2*len(id))
	b.WriteString(prefix)
	var hx [2 * len(store.ID{})]byte
	hex.Encode(hx[:], id[:])
	b.Write(hx[:])
	return b.String()
}

// objectSource is the sites.Objects of the gateway: the /o read path, under
// the admitted call found in each request's context.
type objectSource struct{ r *Role }

type callKey struct{}

// withCall stores the admitted call in ctx for objectSource.
func withCall(ctx context.Context, cl *call) context.Context {
	return context.WithValue(ctx, callKey{}, cl)
}

func callOf(ctx context.Context) (*call, error) {
	cl, ok := ctx.Value(callKey{}).(*call)
	if !ok {
		return nil, errors.New("gateway: object read outside an admitted request")
	}
	return cl, nil
}

// Head returns id's stored Content-Type: from storage's HEAD, else from the
// first provider answering.
func (o objectSource) Head(ctx context.Context, id store.ID) (string, error) {
	cl, err := callOf(ctx)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, "/o/"+id.String(), nil)
	if err != nil {
		return "", err
	}
	rec := newHeaderRecorder()
	if err := o.r.serveID(rec, req, cl, id, nil); err != nil {
		return "", err
	}
	if rec.status != http.StatusOK {
		return "", httpx.DecodeError(rec.status, nil) // a HEAD answer has no envelope
	}
	return rec.h.Get("Content-Type"), nil
}

// ReadAll returns id's bytes when it has at most max of them.
func (o objectSource) ReadAll(ctx context.Context, id store.ID, max int64) ([]byte, error) {
	cl, err := callOf(ctx)
	if err != nil {
		return nil, err
	}
	link, tried := o.r.ups.linkURL(storageapi.RoleName, id[:])
	if link != nil {
		b, err := o.r.readStorage(ctx, cl, link, id, max)
		if err == nil || !o.r.tryProviders(0, err) {
			return b, err
		}
	}
	urls, err := o.r.providers(ctx, cl, id, tried)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithDeadline(ctx, cl.deadline)
	defer cancel()
	b, _, err := o.r.fetch.ReadAll(ctx, id, urls, max)
	return b, err
}

// Serve answers req with id's bytes like GET /o/{b3}, set applied.
func (o objectSource) Serve(w http.ResponseWriter, req *http.Request, id store.ID, set http.Header) error {
	cl, err := callOf(req.Context())
	if err != nil {
		return err
	}
	return o.r.serveID(w, req, cl, id, set)
}

// readStorage reads id from storage through link, verifying its hash;
// more than max bytes is an error.
func (r *Role) readStorage(ctx context.Context, cl *call, link *upstream.Link, id store.ID, max int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "/o/"+id.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := r.send(req, cl, link, "/o/"+id.String())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		env, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return nil, httpx.DecodeError(resp.StatusCode, env)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	switch {
	case err != nil:
		return nil, httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "storage body failed: %v", err)
	case int64(len(b)) > max:
		return nil, httpx.NewError(http.StatusBadGateway, httpx.CodeMalformed, "object larger than %d bytes", max).
			WithDetails(map[string]any{"reason": "too_large"})
	case store.Sum(b) != id:
		return nil, httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamUnavailable, "storage body does not hash to its id").
			WithDetails(map[string]any{"reason": "hash_mismatch"})
	}
	return b, nil
}

// headerRecorder is a ResponseWriter that keeps the status and headers and
// discards the body (HEAD lookups).
type headerRecorder struct {
	h      http.Header
	status int
}

func newHeaderRecorder() *headerRecorder { return &headerRecorder{h: http.Header{}} }

func (h *headerRecorder) Header() http.Header { return h.h }
func (h *headerRecorder) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}
func (h *headerRecorder) Write(p []byte) (int, error) {
	h.WriteHeader(http.StatusOK)
	return len(p), nil
}
