package live

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/roles/edge/httpcache"
)

// serveStored answers the call from the stored response st with body src
// (docs/edge.md §7.4): a 200 goes through the Range/conditional helpers (If-Match and
// If-Unmodified-Since are never evaluated against an entry); another
// status is sent whole. Headers are the stored ones plus Age and
// Cache-Status cs. A body that fails before anything was written gives
// errNotServed; after, the connection is aborted.
func (k *call) serveStored(st *httpcache.Stored, src source, cs string) error {
	defer src.close()
	size := st.BodyLen
	if size < 0 {
		n, err := src.size(k.ctx)
		if err != nil {
			return errNotServed{err}
		}
		size = n
	}
	age := httpcache.AgeValue(httpcache.CurrentAge(st.Header, st.RequestTime, st.ResponseTime, k.l.now()))
	if st.Status != http.StatusOK {
		return k.writeWhole(st, src, size, age, cs)
	}
	ctype := st.Header.Get("Content-Type")
	plan := ranges.NewPlanFor(planRequest(k.r), size, validatorsOf(st), ctype, k.sn.s.MaxRanges)
	if k.r.Method == http.MethodGet && k.r.Header.Get("Range") != "" {
		k.l.met.rangeResult(plan.Status)
	}
	switch plan.Status {
	case http.StatusNotModified:
		return k.write304(st, age, cs)
	case http.StatusRequestedRangeNotSatisfiable:
		return k.notSatisfiable(size, cs)
	case http.StatusPreconditionFailed:
		return httpx.NewError(http.StatusPreconditionFailed, httpx.CodePreconditionFailed, "precondition failed")
	}
	h := k.c.Response().Header()
	k.storedHeader(h, st, age, cs)
	if _, ok := h["Accept-Ranges"]; !ok {
		h.Set("Accept-Ranges", "bytes")
	}
	plan.SetHeaders(h, size, ctype)
	k.c.Response().WriteHeader(plan.Status)
	if k.r.Method == http.MethodHead {
		return nil
	}
	return k.bodyDone(plan.WriteBody(k.c.Response(), size, ctype, k.copier(src)))
}

// notSatisfiable answers 416 with Content-Range: bytes */size (reason
// invalid_range).
func (k *call) notSatisfiable(size int64, cs string) error {
	k.l.met.reject(reasonInvalidRange)
	h := k.c.Response().Header()
	h.Set("Content-Range", ranges.UnsatisfiedContentRange(size))
	h.Set("Cache-Status", cs)
	return httpx.NewError(http.StatusRequestedRangeNotSatisfiable, httpx.CodeRangeNotSatisfiable,
		"no satisfiable range").WithReason(reasonInvalidRange)
}

// writeWhole sends a stored non-200 response as it is.
func (k *call) writeWhole(st *httpcache.Stored, src source, size int64, age, cs string) error {
	h := k.c.Response().Header()
	k.storedHeader(h, st, age, cs)
	withBody := httpx.BodyAllowed(st.Status)
	if withBody {
		h.Set("Content-Length", strconv.FormatInt(size, 10))
	}
	k.c.Response().WriteHeader(st.Status)
	if k.r.Method == http.MethodHead || !withBody || size == 0 {
		return nil
	}
	return k.bodyDone(k.copier(src)(k.c.Response(), 0, size))
}

// write304 answers Not Modified from a stored response (docs/edge.md §7.4).
func (k *call) write304(st *httpcache.Stored, age, cs string) error {
	h := k.c.Response().Header()
	maps.Copy(h, httpcache.NotModifiedHeader(st.Header))
	h.Set("Age", age)
	h.Set("Cache-Status", cs)
	k.c.Response().WriteHeader(http.StatusNotModified)
	return nil
}

// storedHeader puts a stored response's fields, Age and Cache-Status on h
// (no Content-Length: the caller sets the framing; no sniffed
// Content-Type when the origin sent none).
func (k *call) storedHeader(h http.Header, st *httpcache.Stored, age, cs string) {
	copyHeader(h, st.Header)
	h.Del("Content-Length")
	h.Set("Age", age)
	h.Set("Cache-Status", cs)
	if _, ok := h["Content-Type"]; !ok {
		h["Content-Type"] = nil
	}
}

// serveGrowing is the leader's answer from a fill of unknown length: 304
// when its conditionals match, else the whole response streamed as the
// fill grows (Range is not applied: the length is unknown), switching to
// the origin's body if the fill overflows the store limit.
func (k *call) serveGrowing(f *flight, st *httpcache.Stored, fol *edgecache.Follower, cs string) error {
	defer fol.Close()
	age := httpcache.AgeValue(httpcache.CurrentAge(st.Header, st.RequestTime, st.ResponseTime, k.l.now()))
	if st.Status == http.StatusOK && ranges.CheckConditions(planRequest(k.r), validatorsOf(st)) == http.StatusNotModified {
		return k.write304(st, age, cs)
	}
	rctx, wake := context.WithCancelCause(k.ctx)
	defer wake(nil)
	if f.watchOverflow(wake) {
		wake(errOverflow)
	}
	g := &growing{ctx: k.ctx, rctx: rctx, fol: fol, f: f}
	defer g.close()
	k.storedHeader(k.c.Response().Header(), st, age, cs)
	k.c.Response().WriteHeader(st.Status)
	if k.r.Method == http.MethodHead || !httpx.BodyAllowed(st.Status) {
		return nil
	}
	return k.bodyDone(k.stream(g))
}

// relay sends an origin response that is not stored, streaming its body
// (docs/edge.md §7.5): end-to-end fields only, plus Age and Cache-Status cs.
func (k *call) relay(u *upstreamResp, cs string) error {
	h := k.c.Response().Header()
	copyHeader(h, httpcache.EndToEnd(u.resp.Header))
	h.Set("Age", httpcache.AgeValue(httpcache.CurrentAge(u.resp.Header, u.reqTime, u.respTime, k.l.now())))
	h.Set("Cache-Status", cs)
	if _, ok := h["Content-Type"]; !ok {
		h["Content-Type"] = nil
	}
	k.c.Response().WriteHeader(u.status())
	if k.r.Method == http.MethodHead || !httpx.BodyAllowed(u.status()) {
		return nil
	}
	return k.bodyDone(k.stream(u.body))
}

// stream copies r to the client chunk by chunk, flushing each.
func (k *call) stream(r io.Reader) error {
	w := k.c.Response()
	buf := make([]byte, fillBuf)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			k.l.met.served.Add(n)
			w.Flush()
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return errSourceFailed{err}
		}
	}
}

// copier reads the body ranges the helpers ask for from src.
func (k *call) copier(src source) func(w io.Writer, off, n int64) error {
	buf := make([]byte, fillBuf)
	flusher, _ := k.c.Response().Writer.(http.Flusher)
	return func(w io.Writer, off, n int64) error {
		for n > 0 {
			m, err := src.readAt(k.ctx, buf[:min(int64(len(buf)), n)], off)
			if m > 0 {
				if _, werr := w.Write(buf[:m]); werr != nil {
					return werr
				}
				k.l.met.served.Add(m)
				off, n = off+int64(m), n-int64(m)
				if flusher != nil && src.growing() {
					flusher.Flush()
				}
			}
			if err != nil && n > 0 {
				return errSourceFailed{err}
			}
		}
		return nil
	}
}

// bodyDone ends a response whose body was being written: a failing
// source aborts the connection (the client sees a truncated body, never
// a complete wrong one); a client that went away needs nothing more.
func (k *call) bodyDone(err error) error {
	var sf errSourceFailed
	if errors.As(err, &sf) {
		k.l.log.Debug().Err(sf.err).Str("origin", k.t.origin.Name).Msg("live: response aborted")
		panic(http.ErrAbortHandler)
	}
	return nil
}

// writeInterim relays a 1xx response: its fields are sent with it and
// then taken off the final response again.
func (k *call) writeInterim(ir interimResp) {
	w := k.c.Response().Writer
	h := w.Header()
	saved := make(map[string][]string, len(ir.header))
	for name, vs := range ir.header {
		saved[name] = h[name]
		h[name] = vs
	}
	w.WriteHeader(ir.code)
	for name, vs := range saved {
		if vs == nil {
			delete(h, name)
		} else {
			h[name] = vs
		}
	}
}

// planRequest is r without If-Match and If-Unmodified-Since, which are
// never evaluated against an entry (docs/edge.md §7.4, RFC 9111 §4.3.2).
func planRequest(r *http.Request) *http.Request {
	if len(r.Header.Values("If-Match")) == 0 && len(r.Header.Values("If-Unmodified-Since")) == 0 {
		return r
	}
	c := r.Clone(r.Context())
	c.Header.Del("If-Match")
	c.Header.Del("If-Unmodified-Since")
	return c
}

// validatorsOf are the validators of a stored response for the helpers:
// its valid ETag, its Last-Modified (else its Date, docs/edge.md §7.4), strong when
// Date is at least a second later (RFC 9110 §8.8.2.2).
func validatorsOf(st *httpcache.Stored) ranges.Validators {
	v := ranges.Validators{LastModified: httpcache.ModificationTime(st), StrongDate: httpcache.StrongLastModified(st)}
	if hv := httpcache.ValidatorsOf(st.Header); hv.HasETag {
		v.ETag = hv.ETag.String()
	}
	return v
}

// copyHeader sets every field of src on dst (replacing its lines), but
// X-Corr-ID, which stays the edge's.
func copyHeader(dst, src http.Header) {
	for name, vs := range src {
		if name == httpx.HeaderCorrID {
			continue
		}
		dst[name] = slices.Clone(vs)
	}
}
