package tiles

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/internal/iox"
)

// body describes one representation to send: its size, media type, the
// validators and how to copy bytes [off, off+n) of it: from data when the
// representation is in memory, else with read.
type body struct {
	route string // ron_edge_bytes_served_total{route}
	size  int64
	ctype string
	v     ranges.Validators
	date  time.Time
	data  []byte // the whole representation, when in memory
	read  func(w io.Writer, off, n int64) error
	hs    headerSet // header values ready (may be empty)
}

// serve answers the request for b through the Range/conditional helpers
// (docs/edge.md §2) and returns the status sent: 200, 206 or 304. 412 and 416 come back
// as error envelopes (416 with Content-Range "bytes */N" and reason
// invalid_range). The caller has set the representation's other headers
// (Content-Encoding, Vary). A failure after the headers went out aborts the
// connection (http.ErrAbortHandler), so no client mistakes a short body for
// a whole one. A body in memory leaves with its headers in one write where
// the connection can do that (httpx.CoalesceResponse).
func (t *Tiles) serve(c echo.Context, s Settings, b body) (int, error) {
	req, resp := c.Request(), c.Response()
	plan := planFor(req, b, s.MaxRanges)
	if req.Method == http.MethodGet && len(req.Header["Range"]) > 0 {
		t.met.rangeResult(plan.Status)
	}
	h := resp.Header()
	t.setCommon(h, s, b.v, b.date, b.hs)
	switch plan.Status {
	case http.StatusNotModified:
		h.Del("Content-Encoding")
		resp.WriteHeader(http.StatusNotModified)
		return http.StatusNotModified, nil
	case http.StatusPreconditionFailed:
		h.Del("Content-Encoding") // the envelope is not encoded
		return plan.Status, errPrecondition()
	case http.StatusRequestedRangeNotSatisfiable:
		h.Del("Content-Encoding")
		t.met.bad.Inc()
		plan.SetHeaders(h, b.size, b.ctype)
		return plan.Status, httpx.NewError(plan.Status, httpx.CodeRangeNotSatisfiable,
			"no satisfiable range in %q", req.Header.Get("Range")).WithDetails(map[string]any{"reason": ReasonInvalidRange})
	}
	setFraming(h, plan, b)
	if b.data != nil {
		httpx.CoalesceResponse(req)
	}
	resp.WriteHeader(plan.Status)
	if req.Method == http.MethodHead {
		return plan.Status, nil
	}
	n, err := t.writeBody(resp, plan, b)
	t.met.served(b.route, n)
	if err != nil {
		t.log.Debug().Err(err).Str("corr_id", httpx.CorrID(c)).Str("route", b.route).Msg("body aborted")
		panic(http.ErrAbortHandler)
	}
	return plan.Status, nil
}

// planFor is the helpers' plan for b (ranges.NewPlanFor). A request
// carrying neither a precondition nor Range gets what the helpers answer
// it, 200 with the whole body, without asking them.
func planFor(req *http.Request, b body, maxRanges int) ranges.Plan {
	if !hasConditionals(req) && len(req.Header["Range"]) == 0 {
		return ranges.Plan{Status: http.StatusOK, ContentLength: max(b.size, 0)}
	}
	return ranges.NewPlanFor(req, b.size, b.v, b.ctype, maxRanges)
}

// setFraming sets Content-Length and Content-Type (and Content-Range) of
// a 200 or 206: the values b has ready for a 200, else the plan's.
func setFraming(h http.Header, plan ranges.Plan, b body) {
	if plan.Status == http.StatusOK && b.hs.length != nil && b.hs.ctype != nil {
		h["Content-Length"], h["Content-Type"] = b.hs.length, b.hs.ctype
		return
	}
	plan.SetHeaders(h, b.size, b.ctype)
}

// writeBody writes the body of plan and returns the bytes written: a whole
// body in memory in one write, anything else through the plan.
func (t *Tiles) writeBody(w io.Writer, plan ranges.Plan, b body) (int64, error) {
	if plan.Status == http.StatusOK && b.data != nil {
		n, err := w.Write(b.data)
		return int64(n), err
	}
	read := b.read
	if b.data != nil {
		read = sliceRead(b.data)
	}
	cw := &iox.CountingWriter{W: w}
	err := plan.WriteBody(cw, b.size, b.ctype, read)
	return cw.N, err
}

// sliceRead copies ranges of an in-memory representation.
func sliceRead(data []byte) func(w io.Writer, off, n int64) error {
	return func(w io.Writer, off, n int64) error {
		_, err := w.Write(data[off : off+n])
		return err
	}
}

// copyBufSize is the buffer of positioned reads from a pack file.
const copyBufSize = 64 << 10

var copyBufs = sync.Pool{New: func() any { return new([copyBufSize]byte) }}

// readerAtRead copies ranges of a file through positioned reads; a file
// shorter than expected is an error (io.ErrUnexpectedEOF).
func readerAtRead(ra io.ReaderAt) func(w io.Writer, off, n int64) error {
	return func(w io.Writer, off, n int64) error {
		buf := copyBufs.Get().(*[copyBufSize]byte)
		defer copyBufs.Put(buf)
		got, err := io.CopyBuffer(w, io.NewSectionReader(ra, off, n), buf[:])
		if err == nil && got != n {
			err = fmt.Errorf("pack file: %d of %d bytes at %d: %w", got, n, off, io.ErrUnexpectedEOF)
		}
		return err
	}
}

// errPrecondition is the 412 envelope.
func errPrecondition() error {
	return httpx.NewError(http.StatusPreconditionFailed, httpx.CodePreconditionFailed,
		"If-Match or If-Unmodified-Since failed")
}
