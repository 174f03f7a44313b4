package provider

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/content"
	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
	"github.com/ronhq/ron/store/verified/vfetch"
)

// Serve answers the GET or HEAD request r for id from providers
// (docs/gateway.md §4 step 4). providers are filtered again (Filter with no
// skip: idempotent) and tried in order, skipping any whose breaker is open.
//
// GET: {url}/o/{b3}/outboard, then the whole body, or for ONE satisfiable
// Range the group-aligned range covering it (several ranges → 200 with the
// full body). Every 64 KiB group is verified against the id before any of
// its bytes is written. The size its outboard states is proven before an
// answer states it without reading the last group (a 206 ending before that
// group, a 416's bytes */N): from the Fetcher's proven sizes, or by
// fetching and verifying the last group (vfetch.ProveSize; one request of at
// most 64 KiB per object, then remembered); a provider whose size does not
// verify is a failed provider like one with a bad group, and one stating
// another size than a proven one is refused before any body request. A
// whole body or a range reaching the last group states the size in its
// headers before that group verified and never ends complete under a false
// one (a short cut). The response headers are generated: ETag "b3:<hex>",
// Cache-Control "public, max-age=31536000, immutable", Accept-Ranges bytes,
// X-Content-Type-Options nosniff, Content-Length, Content-Range on 206, and
// Content-Type from the provider if it parses as a media type, else
// application/octet-stream. set (may be nil) then replaces response headers
// (the /n Content-Type and Cache-Control). Conditionals and Range follow
// httpx/ranges: 304 written here; 412 and 416 returned as *httpx.Error (416
// after setting Content-Range "bytes */N" on w).
//
// HEAD: headers from the first provider answering 200 to HEAD /o/{b3} (with
// a Content-Length), nothing verified; 200, 304 or 412.
//
// Before the first byte is written Serve returns an error and writes
// nothing: 502 upstream_unavailable with details.reason "hash_mismatch" or
// "no_provider" when every provider failed; 504 timeout when ctx's deadline
// passed; ctx's error when it was cancelled. After the headers were written
// a failure (a hash mismatch, a provider stalling past Timeout or ending
// early, the client gone or stalling past Timeout) aborts the response with
// panic(http.ErrAbortHandler): net/http closes the connection short of
// Content-Length (HTTP/2: stream reset), so no client sees a complete wrong
// body. The caller's handler must let that panic propagate to net/http.
//
// A failed verification marks the provider bad for BadFor and counts as a
// breaker failure (ron_gateway_hash_mismatch_total); so does an invalid
// outboard. A provider without outboards (vfetch.ErrNoOutboard, a ron from
// before verified streaming) is logged and counts as a breaker failure.
// Connection failures, timeouts and 500/502/503/504 count as breaker
// failures; other statuses (404 …) as successes. ctx bounds the
// whole call (give it no deadline shorter than the body needs: Timeout
// already bounds each phase).
func (f *Fetcher) Serve(ctx context.Context, w http.ResponseWriter, r *http.Request, id store.ID, providers []string, set http.Header) error {
	if r.Method == http.MethodHead {
		return f.serveHead(ctx, w, r, id, providers, set)
	}
	mismatch := false
	for _, base := range f.Filter(providers, "") {
		a, ok := f.begin(ctx, base, id)
		if !ok {
			continue
		}
		s, err := f.prepare(a, r, w.Header())
		if err == nil {
			return s.send(w, set)
		}
		a.end(err)
		var he *httpx.Error
		switch {
		case errors.As(err, &he):
			return he
		case ctx.Err() != nil:
			return ctxError(ctx)
		}
		mismatch = mismatch || errors.Is(err, verified.ErrMismatch)
	}
	return failed(mismatch)
}

// session is a GET answer ready to send: the plan, and for 200/206 the open
// body whose first group is already verified.
type session struct {
	a     *attempt
	tree  verified.Tree
	plan  ranges.Plan
	b     *vfetch.Body // nil for 304
	first []byte       // the first verified group (nil for an empty object)
	skip  int64        // bytes of the fetched span before the answer's first byte
	n     int64        // bytes to send
}

// prepare fetches the outboard, decides the answer and, for 200/206, opens
// the body and verifies its first group. Final answers (412, 416) come back
// as *httpx.Error; h receives the 416's Content-Range.
func (f *Fetcher) prepare(a *attempt, r *http.Request, h http.Header) (*session, error) {
	t, err := f.req().Outboard(a.ctx, a.base, a.id)
	if err != nil {
		return nil, err
	}
	s := &session{a: a, tree: t, plan: ranges.NewPlan(r, t.Size, content.ETag(a.id), "", 1)}
	if vfetch.StatesUnproven(s.plan, t) {
		if err := f.req().ProveSize(a.ctx, a.base, t); err != nil {
			return nil, err
		}
	}
	switch s.plan.Status {
	case http.StatusNotModified:
		return s, nil
	case http.StatusPreconditionFailed:
		return nil, httpx.NewError(http.StatusPreconditionFailed, httpx.CodePreconditionFailed, "If-Match did not match")
	case http.StatusRequestedRangeNotSatisfiable:
		h.Set("Content-Range", ranges.UnsatisfiedContentRange(t.Size))
		return nil, httpx.NewError(http.StatusRequestedRangeNotSatisfiable, httpx.CodeRangeNotSatisfiable,
			"no satisfiable range in %q", r.Header.Get("Range"))
	}
	start, first, last := int64(0), 0, t.Count()-1
	s.n = t.Size
	if s.plan.Status == http.StatusPartialContent {
		start, s.n = s.plan.Ranges[0].Start, s.plan.Ranges[0].Length
		first, last = t.GroupRange(start, start+s.n-1)
	}
	off, _ := t.Span(first, last)
	s.skip = start - off
	if s.b, err = f.req().Open(a.ctx, a.base, t, first, last); err != nil {
		return nil, err
	}
	if s.first, err = s.b.Next(); err != nil && err != io.EOF { // EOF: an empty object, verified
		s.b.Close()
		return nil, err
	}
	return s, nil
}

// send writes the answer. Failures after the headers abort the response.
func (s *session) send(w http.ResponseWriter, set http.Header) error {
	h := w.Header()
	content.SetObject(h, content.ETag(s.a.id))
	if s.b == nil { // 304
		applySet(h, set, true)
		w.WriteHeader(http.StatusNotModified)
		s.a.end(nil)
		return nil
	}
	defer s.b.Close()
	ctype := s.b.ContentType
	if v := set.Get("Content-Type"); v != "" {
		ctype = v
	}
	s.plan.SetHeaders(h, s.tree.Size, ctype)
	applySet(h, set, false)
	w.WriteHeader(s.plan.Status)
	cw := newClientWriter(w, s.a.f.timeoutNow())
	defer cw.clear()
	err := s.stream(cw)
	s.a.end(err)
	if err != nil {
		if errors.Is(err, errClientTimeout) {
			s.a.f.met.writeTimeouts.Inc()
		}
		panic(http.ErrAbortHandler)
	}
	return nil
}

// stream writes the answer's bytes: the first group, then each further
// verified group, trimmed to the requested range.
func (s *session) stream(cw *clientWriter) error {
	group, skip, n := s.first, s.skip, s.n
	for n > 0 {
		part := group[min(skip, int64(len(group))):]
		skip -= int64(len(group)) - int64(len(part))
		part = part[:min(n, int64(len(part)))]
		if len(part) > 0 {
			if err := cw.write(part); err != nil {
				return err
			}
			n -= int64(len(part))
		}
		if n == 0 {
			return nil
		}
		var err error
		if group, err = s.b.Next(); err != nil {
			if err == io.EOF {
				err = verified.ErrShort // cannot happen: the Reader's range covers the answer
			}
			return err
		}
	}
	return nil
}

// applySet replaces the headers named in set; on a 304 its Content-Type
// and Content-Length are left out.
func applySet(h, set http.Header, notModified bool) {
	for k, vs := range set {
		k = http.CanonicalHeaderKey(k)
		if notModified && (k == "Content-Type" || k == "Content-Length") {
			continue
		}
		h[k] = append([]string(nil), vs...)
	}
}
