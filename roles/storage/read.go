package storage

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/content"
	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/store"
)

// maxRangeParts is storage's multi-range part cap (docs/storage.md §4).
const maxRangeParts = 16

// readAuth checks the token when reads are private.
func (r *Role) readAuth(c echo.Context) error {
	if r.Cfg.Load().PublicReads {
		return nil
	}
	return r.authorize(c, storageapi.ScopeRead)
}

func (r *Role) handleGet(c echo.Context) error {
	if err := r.readAuth(c); err != nil {
		return err
	}
	id, err := parseID(c)
	if err != nil {
		return err
	}
	start := time.Now()
	obj, done, err := r.openObject(c.Request().Context(), httpx.RouteOf(c), id)
	if err != nil {
		return err
	}
	defer done()
	return r.serveObject(c, obj, start)
}

// openObject is the lookup shared by GET, HEAD, chunks and LocalClient:
// admission into the GET pool (429 busy), then Open (404, 404 quarantined,
// 500 corrupt). done closes the object and frees the slot; the caller calls
// it when its response has ended.
func (r *Role) openObject(ctx context.Context, endpoint string, id store.ID) (obj store.Object, done func(), err error) {
	release, err := r.enter(ctx, r.work.get, endpoint)
	if err != nil {
		return nil, nil, err
	}
	obj, err = r.engine.Open(ctx, id)
	if err != nil {
		release()
		return nil, nil, storeError(err)
	}
	return obj, func() { obj.Close(); release() }, nil
}

// contentType is the Content-Type an object is served with: the stored
// value, else application/octet-stream.
func contentType(info store.Info) string {
	if info.ContentType == "" {
		return "application/octet-stream"
	}
	return info.ContentType
}

// serveObject answers GET/HEAD /o/{b3} for an open object: conditionals,
// Range, then a verified body.
func (r *Role) serveObject(c echo.Context, obj store.Object, start time.Time) error {
	req := c.Request()
	info := obj.Info()
	etag := content.ETag(info.ID)
	ctype := contentType(info)
	plan := ranges.NewPlan(req, info.Size, etag, ctype, maxRangeParts)
	h := c.Response().Header()
	content.SetObject(h, etag)
	switch plan.Status {
	case http.StatusNotModified:
		c.Response().WriteHeader(http.StatusNotModified)
		return nil
	case http.StatusPreconditionFailed:
		return httpx.NewError(http.StatusPreconditionFailed, httpx.CodePreconditionFailed, "If-Match did not match")
	case http.StatusRequestedRangeNotSatisfiable:
		h.Set("Content-Range", "bytes */"+strconv.FormatInt(info.Size, 10))
		return httpx.NewError(plan.Status, httpx.CodeRangeNotSatisfiable, "no satisfiable range in %q", req.Header.Get("Range"))
	}
	if req.Method == http.MethodHead {
		plan.SetHeaders(h, info.Size, ctype)
		c.Response().WriteHeader(plan.Status)
		return nil
	}
	return r.sendBody(c, obj, plan, ctype, start)
}

// sendBody verifies the first covering chunk before any header leaves, then
// streams verified chunks under a per-write deadline. Corruption after the
// headers aborts the response so no client sees a complete-looking body.
func (r *Role) sendBody(c echo.Context, obj store.Object, plan ranges.Plan, ctype string, start time.Time) error {
	info := obj.Info()
	cr := newChunkReader(obj, r.metrics.chunksVerified())
	defer cr.release()
	if err := cr.verifyFirst(firstByte(plan)); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Type", ctype) // multipart answers get theirs from SetHeaders
	plan.SetHeaders(h, info.Size, ctype)
	c.Response().WriteHeader(plan.Status)
	r.metrics.getTTFB(rangeKind(plan)).UpdateDuration(start)
	w := &deadlineWriter{w: c.Response(), rc: http.NewResponseController(c.Response()), d: r.Cfg.Load().StreamWriteTimeout}
	err := plan.WriteBody(w, info.Size, ctype, cr.copyRange)
	r.metrics.bytesOut(httpx.RouteOf(c), w.n)
	if err != nil {
		r.abortStream(err)
	}
	return nil
}

// abortStream ends a response whose headers are out: the connection is closed
// short of its Content-Length.
func (r *Role) abortStream(err error) {
	switch {
	case errors.Is(err, errWriteTimeout):
		r.metrics.ioTimeout("write_body")
	case r.Draining():
		r.metrics.aborted("get")
	}
	panic(http.ErrAbortHandler)
}

func firstByte(p ranges.Plan) int64 {
	if p.Status == http.StatusPartialContent && len(p.Ranges) > 0 {
		return p.Ranges[0].Start
	}
	return 0
}

func rangeKind(p ranges.Plan) string {
	switch {
	case p.Status != http.StatusPartialContent:
		return "none"
	case len(p.Ranges) == 1:
		return "single"
	}
	return "multi"
}

// chunkReader copies byte ranges of an object out of verified chunks,
// keeping the last verified chunk so neighbouring ranges don't re-read it.
type chunkReader struct {
	obj      store.Object
	verified interface{ Inc() }
	buf      []byte
	pooled   *[store.ChunkSize]byte // buf's backing array when it came from chunkBufs
	idx      int
	data     []byte
}

// chunkBufs recycles full-chunk buffers between reads; objects smaller than
// one chunk get a buffer of their own size instead.
var chunkBufs = sync.Pool{New: func() any { return new([store.ChunkSize]byte) }}

// newChunkReader reads obj's chunks into a buffer sized to its first chunk;
// release must be called once the reader is no longer used.
func newChunkReader(obj store.Object, verified interface{ Inc() }) *chunkReader {
	cr := &chunkReader{obj: obj, verified: verified, idx: -1}
	if size := obj.Info().Size; size < store.ChunkSize {
		cr.buf = make([]byte, size)
	} else {
		cr.pooled = chunkBufs.Get().(*[store.ChunkSize]byte)
		cr.buf = cr.pooled[:]
	}
	return cr
}

// release returns a pooled buffer; the reader must not be used afterwards.
func (cr *chunkReader) release() {
	if cr.pooled != nil {
		chunkBufs.Put(cr.pooled)
		cr.pooled, cr.buf, cr.data, cr.idx = nil, nil, nil, -1
	}
}

func (cr *chunkReader) load(i int) error {
	if i == cr.idx {
		return nil
	}
	data, err := cr.obj.ReadChunk(i, cr.buf)
	if err != nil {
		cr.idx = -1
		return err
	}
	cr.verified.Inc()
	cr.idx, cr.data = i, data
	return nil
}

// verifyFirst loads and verifies the chunk holding byte off before any
// header or byte leaves (nothing to do for an empty object). Corruption is
// 500 corrupt.
func (cr *chunkReader) verifyFirst(off int64) error {
	if cr.obj.Info().Size == 0 {
		return nil
	}
	if _, err := cr.at(off); err != nil {
		return storeError(err)
	}
	return nil
}

// at returns the verified bytes from off to the end of off's chunk.
func (cr *chunkReader) at(off int64) ([]byte, error) {
	i := int(off / store.ChunkSize)
	if err := cr.load(i); err != nil {
		return nil, err
	}
	return cr.data[off-int64(i)*store.ChunkSize:], nil
}

// copyRange writes bytes [off, off+n) to w, chunk by verified chunk.
func (cr *chunkReader) copyRange(w io.Writer, off, n int64) error {
	for n > 0 {
		part, err := cr.at(off)
		if err != nil {
			return err
		}
		part = part[:min(int64(len(part)), n)]
		if _, err := w.Write(part); err != nil {
			return err
		}
		off += int64(len(part))
		n -= int64(len(part))
	}
	return nil
}

var errWriteTimeout = errors.New("write deadline exceeded")

// deadlineWriter gives every write its own deadline (stream_write_timeout).
type deadlineWriter struct {
	w  io.Writer
	rc *http.ResponseController
	d  time.Duration
	n  int64
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.d))
	n, err := w.w.Write(p)
	w.n += int64(n)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return n, errWriteTimeout
	}
	return n, err
}
