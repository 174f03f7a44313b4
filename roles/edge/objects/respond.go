package objects

import (
	"fmt"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/content"
	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/roles/edge/edgecache"
	"github.com/ronhq/ron/roles/edge/httpcache"
	"github.com/ronhq/ron/store"
)

// statusHit is the Cache-Status of answers from the cache (docs/edge.md §3).
const statusHit = httpcache.CacheName + "; hit"

// validators are an object's validators: its ETag only.
func validators(id store.ID) ranges.Validators { return ranges.Validators{ETag: content.ETag(id)} }

// early decides the answers that need neither the cache nor a source: 412
// when If-Match names other objects only, 304 when If-None-Match names this
// one (weak comparison). An If-None-Match of "*" alone is left to the
// answer, which knows whether the object exists.
func early(r *http.Request, id store.ID) int {
	if !hasPreconditions(r) {
		return 0
	}
	st := ranges.CheckConditions(r, validators(id))
	if st == http.StatusNotModified && ranges.CheckConditions(r, ranges.Validators{ETag: `"-"`}) == http.StatusNotModified {
		return 0 // matched by "*", which says nothing about this object
	}
	return st
}

// answerEarly writes the 304 of early, or returns its 412.
func (o *Objects) answerEarly(c echo.Context, id store.ID, st int) error {
	if st == http.StatusPreconditionFailed {
		return errPrecondition()
	}
	h := c.Response().Header()
	content.SetObject(h, content.ETag(id))
	setCacheStatus(h, statusHit)
	return c.NoContent(http.StatusNotModified)
}

// errPrecondition is the 412 envelope.
func errPrecondition() error {
	return httpx.NewError(http.StatusPreconditionFailed, httpx.CodePreconditionFailed, "If-Match did not match")
}

// Constant header values, shared by every answer (each slice has capacity
// 1, so h.Add copies; nothing may modify them).
var valHit = []string{statusHit}

// setCacheStatus sets Cache-Status.
func setCacheStatus(h http.Header, status string) {
	if status == statusHit {
		h["Cache-Status"] = valHit
		return
	}
	h.Set("Cache-Status", status)
}

// answer is one representation of an object to send.
type answer struct {
	id          store.ID
	size        int64
	ctype       string
	cacheStatus string
	// plan, when set, was decided already (streamed answers); else it is
	// decided here from the request.
	plan *ranges.Plan
	// wait, when set, blocks until byte off exists (a growing fill), so
	// that the headers go out only once the answer's first byte can follow.
	wait func(off int64) error
	// read copies bytes [off, off+n) to w.
	read func(w io.Writer, off, n int64) error
	// prove, when set, returns nil once the size may be stated by the
	// answer planned (a fill's size is proven for a 206 ending before the
	// last group and a 416); nil for a proven size (a hit, a plan decided by
	// a stream that proved it).
	prove func(plan ranges.Plan) error
}

// respond answers the request with a through the Range/conditional helpers
// (docs/edge.md §2). 412 and 416 come back as envelopes (416 with
// Content-Range "bytes */N" and reason invalid_range). A failure after the
// headers went out aborts the connection.
func (o *Objects) respond(c echo.Context, a answer) error {
	req, resp := c.Request(), c.Response()
	plan := o.planFor(req, a)
	if a.prove != nil {
		if err := a.prove(plan); err != nil {
			return answerError(req.Context(), err)
		}
	}
	h := resp.Header()
	switch plan.Status {
	case http.StatusPreconditionFailed:
		return errPrecondition()
	case http.StatusRequestedRangeNotSatisfiable:
		o.met.invalidRange.Inc()
		plan.SetHeaders(h, a.size, a.ctype)
		return httpx.NewError(plan.Status, httpx.CodeRangeNotSatisfiable, "no satisfiable range in %q",
			req.Header.Get("Range")).WithDetails(map[string]any{"reason": ReasonInvalidRange})
	}
	if err := a.waitFirst(req, plan); err != nil {
		return answerError(req.Context(), err)
	}
	content.SetObject(h, content.ETag(a.id))
	setCacheStatus(h, a.cacheStatus)
	if plan.Status == http.StatusNotModified {
		resp.WriteHeader(http.StatusNotModified)
		return nil
	}
	plan.SetHeaders(h, a.size, a.ctype)
	if a.wait == nil && a.plan == nil {
		// The whole object is at hand (a hit): no write waits for another.
		httpx.CoalesceResponse(req)
	}
	resp.WriteHeader(plan.Status)
	if req.Method == http.MethodHead {
		return nil
	}
	cw := &countWriter{w: resp}
	err := plan.WriteBody(cw, a.size, a.ctype, a.read)
	o.met.served.Add(int(cw.n))
	if err != nil {
		o.opt.Log.Debug().Err(err).Str("corr_id", httpx.CorrID(c)).Str("b3_prefix", a.id.Prefix()).Msg("object answer aborted")
		panic(http.ErrAbortHandler)
	}
	return nil
}

// planFor is a's plan, or the request's against a, counted when the GET
// carried a Range. A request with neither a precondition, If-Range nor
// Range gets what the helpers answer it, 200 with the whole object,
// without asking them.
func (o *Objects) planFor(req *http.Request, a answer) ranges.Plan {
	var plan ranges.Plan
	switch {
	case a.plan != nil:
		plan = *a.plan
	case !hasPreconditions(req) && len(req.Header["If-Range"]) == 0 && len(req.Header["Range"]) == 0:
		plan = ranges.Plan{Status: http.StatusOK, ContentLength: max(a.size, 0)}
	default:
		plan = ranges.NewPlanFor(req, a.size, validators(a.id), a.ctype, o.limits().MaxRanges)
	}
	if req.Method == http.MethodGet && req.Header.Get("Range") != "" {
		o.met.rangeResult(plan.Status)
	}
	return plan
}

// hasPreconditions reports whether r carries a precondition field.
func hasPreconditions(r *http.Request) bool {
	h := r.Header
	return len(h["If-None-Match"]) > 0 || len(h["If-Match"]) > 0 || len(h["If-Modified-Since"]) > 0 ||
		len(h["If-Unmodified-Since"]) > 0
}

// waitFirst waits, for a GET with a body, until the first byte of the
// answer exists.
func (a answer) waitFirst(req *http.Request, plan ranges.Plan) error {
	if a.wait == nil || req.Method != http.MethodGet || plan.ContentLength == 0 {
		return nil
	}
	switch plan.Status {
	case http.StatusOK:
		return a.wait(0)
	case http.StatusPartialContent:
		return a.wait(plan.Ranges[0].Start)
	}
	return nil
}

// countWriter counts the bytes written through it to the response; its
// ReadFrom reaches the response writer's own (sendfile on a connection).
type countWriter struct {
	w *echo.Response
	n int64
}

func (cw *countWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	cw.n += int64(n)
	return n, err
}

// ReadFrom implements io.ReaderFrom.
func (cw *countWriter) ReadFrom(src io.Reader) (int64, error) {
	var n int64
	var err error
	if rf, ok := cw.w.Writer.(io.ReaderFrom); ok && cw.w.Committed {
		n, err = rf.ReadFrom(src)
		cw.w.Size += n
	} else {
		buf := getBuf()
		defer putBuf(buf)
		n, err = io.CopyBuffer(writerOnly{cw.w}, src, buf[:])
	}
	cw.n += n
	return n, err
}

// writerOnly hides a writer's ReadFrom from io.Copy.
type writerOnly struct{ io.Writer }

// blobRead copies ranges of a stored blob: in memory, the stored slices
// themselves; on disk, with sendfile where the writer can (an
// edgecache.FileSectioner section handed to its ReadFrom); else through a
// buffer.
func blobRead(b io.ReaderAt) func(w io.Writer, off, n int64) error {
	return func(w io.Writer, off, n int64) error {
		got, err := copyBlob(w, b, off, n)
		if err == nil && got != n {
			err = fmt.Errorf("blob: %d of %d bytes at %d: %w", got, n, off, io.ErrUnexpectedEOF)
		}
		return err
	}
}

// copyBlob copies bytes [off, off+n) of b to w and returns how many it
// wrote.
func copyBlob(w io.Writer, b io.ReaderAt, off, n int64) (int64, error) {
	if s, ok := b.(edgecache.Slicer); ok {
		var total int64
		for _, p := range s.Slices(off, n) {
			m, err := w.Write(p)
			total += int64(m)
			if err != nil {
				return total, err
			}
		}
		return total, nil
	}
	if fs, ok := b.(edgecache.FileSectioner); ok {
		if rf, ok := w.(io.ReaderFrom); ok {
			r, err := fs.Section(off, n)
			if err != nil {
				return 0, err
			}
			return rf.ReadFrom(r)
		}
	}
	buf := getBuf()
	defer putBuf(buf)
	return io.CopyBuffer(w, io.NewSectionReader(b, off, n), buf[:])
}
