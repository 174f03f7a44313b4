package inproc

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ronhq/ron/httpx"
)

// ErrAborted is the body read error after the handler panicked (e.g. with
// http.ErrAbortHandler) or returned short of its declared Content-Length.
// It wraps io.ErrUnexpectedEOF, as a connection dropped mid-body reads.
var ErrAborted = fmt.Errorf("inproc: response aborted by the handler: %w", io.ErrUnexpectedEOF)

// errNoDeadlines answers SetReadDeadline / SetWriteDeadline.
var errNoDeadlines = fmt.Errorf("inproc: no connection deadlines: %w", http.ErrNotSupported)

// head is what the handler's goroutine hands to RoundTrip: the committed
// status and header snapshot, or the error that ended it before that.
type head struct {
	status int
	header http.Header
	err    error
}

// out is where a writer delivers the response: RoundTrip's pipe or a Sink.
type out interface {
	// head receives the committed status and the handler's header map.
	head(status int, h http.Header)
	// body receives the bytes of a response that may carry them.
	body(p []byte) (int, error)
}

// pipeOut is RoundTrip's out: the head through the ready channel (a copy
// of the header), the body through the pipe.
type pipeOut struct {
	pw    *io.PipeWriter
	ready chan<- head // receives exactly one value
	sent  bool
}

func (o *pipeOut) head(status int, h http.Header) {
	o.sent = true
	o.ready <- head{status: status, header: h.Clone()}
}

func (o *pipeOut) body(p []byte) (int, error) { return o.pw.Write(p) }

// end closes the pipe with how the response ended (nil: complete); an
// error before the head is RoundTrip's error.
func (o *pipeOut) end(err error) {
	if !o.sent {
		o.sent = true
		o.ready <- head{err: err}
	}
	if err != nil {
		o.pw.CloseWithError(err)
		return
	}
	_ = o.pw.Close()
}

// writer is the handler's http.ResponseWriter. Only the handler's goroutine
// touches it (as with net/http).
type writer struct {
	ctx       context.Context // the handler's request context
	method    string
	header    http.Header
	out       out
	committed bool
	status    int
	declared  int64 // Content-Length at commit, -1 when none
	written   int64
}

func newWriter(ctx context.Context, method string, o out) *writer {
	return &writer{ctx: ctx, method: method, header: http.Header{}, out: o, declared: -1}
}

// Header returns the header map the handler fills before committing.
func (w *writer) Header() http.Header { return w.header }

// WriteHeader commits code and the header. As with net/http an invalid code
// panics, a second call is ignored, and 1xx informational codes other than
// 101 do not commit (they are dropped here).
func (w *writer) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if w.committed || code < 200 && code != http.StatusSwitchingProtocols {
		return
	}
	w.commit(code)
}

func (w *writer) commit(code int) {
	w.committed, w.status = true, code
	if n, ok := singleLength(w.header.Values("Content-Length")); ok {
		w.declared = n
	}
	w.out.head(code, w.header)
}

// Write commits 200 when needed (sniffing Content-Type from p if none is
// set), then streams p to the caller. It fails with http.ErrBodyNotAllowed
// for statuses without a body and http.ErrContentLength past the declared
// length, and with the context's error once the request's context ended
// (the caller closed the body or gave up); bytes of a HEAD answer are
// counted and discarded.
func (w *writer) Write(p []byte) (int, error) {
	if !w.committed {
		w.sniff(p)
		w.commit(http.StatusOK)
	}
	if !httpx.BodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if err := w.ctx.Err(); err != nil {
		return 0, err
	}
	w.written += int64(len(p))
	if w.declared >= 0 && w.written > w.declared {
		return 0, http.ErrContentLength
	}
	if w.method == http.MethodHead || len(p) == 0 {
		return len(p), nil
	}
	return w.out.body(p)
}

// sniff sets Content-Type from the first bytes as net/http does when the
// handler set none and the body is not transfer-encoded.
func (w *writer) sniff(p []byte) {
	_, haveType := w.header["Content-Type"]
	if haveType || len(p) == 0 || w.header.Get("Transfer-Encoding") != "" {
		return
	}
	w.header.Set("Content-Type", http.DetectContentType(p))
}

// Flush commits the headers (200 when none were written). Writes are never
// buffered, so there is nothing else to push.
func (w *writer) Flush() {
	if !w.committed {
		w.commit(http.StatusOK)
	}
}

// SetReadDeadline is not supported: there is no connection.
func (w *writer) SetReadDeadline(time.Time) error { return errNoDeadlines }

// SetWriteDeadline is not supported: there is no connection.
func (w *writer) SetWriteDeadline(time.Time) error { return errNoDeadlines }

// finish ends a response whose handler returned normally and reports how it
// ended: an uncommitted one becomes 200 (with Content-Length: 0 when it
// could carry a body, as net/http does); a body short of its declared
// length ended in ErrAborted; one whose request context ended ended in that
// context's error (the caller left: a cut body must never end cleanly);
// otherwise nil.
func (w *writer) finish() error {
	if !w.committed {
		if w.method != http.MethodHead && w.header.Get("Content-Length") == "" && w.header.Get("Transfer-Encoding") == "" {
			w.header.Set("Content-Length", "0")
		}
		w.commit(http.StatusOK)
	}
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if w.declared >= 0 && w.written < w.declared && w.method != http.MethodHead && httpx.BodyAllowed(w.status) {
		return ErrAborted
	}
	return nil
}

// panicked reports how a response whose handler panicked with value p
// ended: ErrAborted after the headers, else an error wrapping p (nothing is
// committed then).
func (w *writer) panicked(p any) error {
	if w.committed {
		return ErrAborted
	}
	w.committed = true
	if pe, ok := p.(error); ok {
		return fmt.Errorf("inproc: handler panicked before the response headers: %w", pe)
	}
	return fmt.Errorf("inproc: handler panicked before the response headers: %v", p)
}

// singleLength returns the one non-negative decimal all values agree on.
func singleLength(vs []string) (int64, bool) {
	if len(vs) == 0 {
		return 0, false
	}
	first := strings.TrimSpace(vs[0])
	n, err := strconv.ParseInt(first, 10, 64)
	if err != nil || n < 0 || first == "" || first[0] == '+' {
		return 0, false
	}
	for _, v := range vs[1:] {
		if strings.TrimSpace(v) != first {
			return 0, false
		}
	}
	return n, true
}
