package inproc

import (
	"net/http"
	"sync"
)

// Sink receives the answer of a handler that Transport.Serve runs in the
// caller's goroutine. Its methods are called from that goroutine only, in
// order: Commit once, then Write for each piece of the body.
type Sink interface {
	// Commit is called once, when the handler commits its headers
	// (WriteHeader, first Write, Flush, or return), with the status and the
	// handler's own header map: read it during the call only (changes the
	// handler makes later are not part of the answer, as with net/http). It is
	// not called when the handler panics before committing.
	Commit(status int, header http.Header)
	// Write receives the body in the handler's pieces; it is never called
	// for a HEAD request or a status without a body. Its error is the error
	// of the handler's Write.
	Write(p []byte) (int, error)
}

// sinkOut adapts a Sink to the writer's out.
type sinkOut struct{ s Sink }

func (o sinkOut) head(status int, h http.Header) { o.s.Commit(status, h) }
func (o sinkOut) body(p []byte) (int, error)     { return o.s.Write(p) }

// Serve serves r through the handler synchronously, in the calling
// goroutine, and delivers the answer to s: no goroutine, pipe or copy. The
// handler sees the same server-side request as with RoundTrip, built from r
// in place (Serve takes r and its Header over), with r's context (no cancel
// of its own) and the same ResponseWriter behaviour (sniffing, declared
// length, Flush committing, no connection deadlines).
//
// Serve returns once the handler has returned, with how the answer ended:
// nil when it is complete; ErrAborted when the handler panicked after
// committing or returned short of its declared Content-Length; r's context
// error when that context ended before the handler returned; and, when the
// handler panicked before committing (Commit was never called), an error
// wrapping the panic value. It never lets a panic escape. r.Body is closed
// before Serve returns.
//
// Unlike RoundTrip, Serve cannot give up on a handler: one that ignores its
// context's end holds the caller until it returns.
func (t *Transport) Serve(r *http.Request, s Sink) error {
	body := r.Body
	defer func() {
		if body != nil {
			_ = body.Close()
		}
	}()
	if err := toServer(r, body, r.Context()); err != nil {
		return err
	}
	w := sinkWriters.Get().(*sinkWriter)
	defer w.recycle()
	w.so.s = s
	w.writer = writer{ctx: r.Context(), method: r.Method, header: w.header, out: &w.so, declared: -1}
	return run(t.h, &w.writer, r)
}

// sinkWriter is Serve's writer with its sink adapter, recycled with its
// header map: net/http forbids using a ResponseWriter (and so its header)
// after the handler returned, and a Sink reads the header only during
// Commit.
type sinkWriter struct {
	writer
	so sinkOut
}

var sinkWriters = sync.Pool{New: func() any { return &sinkWriter{writer: writer{header: http.Header{}}} }}

// recycle empties w and puts it back in the pool.
func (w *sinkWriter) recycle() {
	h := w.header
	clear(h)
	*w = sinkWriter{writer: writer{header: h}}
	sinkWriters.Put(w)
}
