package inproc

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/ronhq/ron/httpx"
)

// errReadOnClosed is the error of a read after Close, worded as net/http's.
var errReadOnClosed = errors.New("http: read on closed response body")

// newResponse builds the caller's response from the committed head. The
// body is http.NoBody for HEAD, 1xx, 204 and 304 (the pipe is then closed at
// once, so the handler is never held up by a write).
// ContentLength is the single valid Content-Length header, else -1; 0 for
// 1xx, 204 and 304 as Go's client reports.
func newResponse(r *http.Request, h head, pr *io.PipeReader, cancel context.CancelFunc) *http.Response {
	resp := &http.Response{
		Status:     strconv.Itoa(h.status) + " " + http.StatusText(h.status),
		StatusCode: h.status,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        h.header,
		ContentLength: -1,
		Request:       r,
	}
	if n, ok := singleLength(h.header.Values("Content-Length")); ok {
		resp.ContentLength = n
	}
	if !httpx.BodyAllowed(h.status) {
		resp.ContentLength = 0
	}
	if r.Method == http.MethodHead || !httpx.BodyAllowed(h.status) {
		resp.Body = http.NoBody
		_ = pr.Close()
		return resp
	}
	b := &body{pr: pr, ctx: r.Context(), cancel: cancel}
	b.stop = context.AfterFunc(r.Context(), func() { pr.CloseWithError(r.Context().Err()) })
	resp.Body = b
	return resp
}

// body is the caller's end of the pipe.
type body struct {
	pr     *io.PipeReader
	ctx    context.Context // the caller's
	cancel context.CancelFunc
	stop   func() bool
	closed atomic.Bool
}

// Read returns the handler's bytes, io.EOF at the end, ErrAborted (wrapping
// io.ErrUnexpectedEOF) when the handler broke off, the caller's context
// error once that context ended, and an error after Close.
func (b *body) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, errReadOnClosed
	}
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := b.pr.Read(p)
	if err == nil || err == io.EOF {
		return n, err
	}
	if b.closed.Load() {
		return n, errReadOnClosed
	}
	if cerr := b.ctx.Err(); cerr != nil && errors.Is(err, io.ErrClosedPipe) {
		return n, cerr
	}
	return n, err
}

// Close releases the body: the handler's context is cancelled and its
// pending and later writes fail. It is safe to call more than once.
func (b *body) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	b.stop()
	_ = b.pr.Close()
	b.cancel()
	return nil
}
