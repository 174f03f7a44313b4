package edge

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/ronhq/ron/httpx"
)

// Write pacing of streamed bodies (docs/edge.md §2): once the first byte is
// out, every chunk of at most writeChunk bytes must be written within
// writeChunkTimeout.
const (
	writeChunk        = 64 << 10
	writeChunkTimeout = httpx.WriteTimeout
)

// incer counts an event (a *metrics.Counter).
type incer interface{ Inc() }

// committer is told once when a response commits its headers.
type committer interface{ commit(h http.Header) }

// writeDeadliner sets the connection's write deadline (*http.response has
// it; other writers go through http.ResponseController).
type writeDeadliner interface{ SetWriteDeadline(time.Time) error }

// chunkWriter paces a response: every write goes out in pieces of at most
// writeChunk bytes, each under a fresh write deadline of writeChunkTimeout
// (ignored where the connection has none, e.g. in-process). The first
// write timeout is counted in ron_io_timeouts_total{op="write"}. It tells
// its committer when the final headers commit (WriteHeader ≥ 200, or the
// first write, flush or ReadFrom); 1xx interim answers do not commit.
type chunkWriter struct {
	http.ResponseWriter
	dl        writeDeadliner
	timeouts  incer
	hook      committer // nil = none
	committed bool
	paced     bool             // a write deadline was set for a body write
	lr        io.LimitedReader // ReadFrom's piece
	timedOut  bool
}

// init sets cw up over w.
func (w *chunkWriter) init(rw http.ResponseWriter, timeouts incer, hook committer) {
	w.ResponseWriter, w.timeouts, w.hook = rw, timeouts, hook
	if dl, ok := rw.(writeDeadliner); ok {
		w.dl = dl
	} else {
		w.dl = http.NewResponseController(rw)
	}
}

// commit runs the hook once, before the headers go out.
func (w *chunkWriter) commit() {
	if w.committed {
		return
	}
	w.committed = true
	if w.hook != nil {
		w.hook.commit(w.ResponseWriter.Header())
	}
}

// WriteHeader implements http.ResponseWriter. An interim (1xx) answer
// leaves at once, so it gets a fresh write deadline.
func (w *chunkWriter) WriteHeader(code int) {
	if code >= http.StatusOK {
		w.commit()
	} else {
		w.pace()
	}
	w.ResponseWriter.WriteHeader(code)
}

// pace sets the deadline of the next piece.
func (w *chunkWriter) pace() {
	w.paced = true
	_ = w.dl.SetWriteDeadline(time.Now().Add(writeChunkTimeout))
}

// failed counts the first write timeout and returns err.
func (w *chunkWriter) failed(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) && !w.timedOut {
		w.timedOut = true
		w.timeouts.Inc()
	}
	return err
}

// Write implements io.Writer.
func (w *chunkWriter) Write(p []byte) (int, error) {
	w.commit()
	n := 0
	for len(p) > 0 {
		k := min(len(p), writeChunk)
		w.pace()
		m, err := w.ResponseWriter.Write(p[:k])
		n += m
		if err != nil {
			return n, w.failed(err)
		}
		p = p[k:]
	}
	return n, nil
}

// ReadFrom implements io.ReaderFrom: src is copied in pieces of at most
// writeChunk bytes, each by the underlying writer's ReadFrom when it has
// one (net/http: sendfile for a file, or an *io.LimitedReader over one).
// The headers are flushed first, so net/http hands the whole body to the
// connection instead of copying its first bytes to sniff them.
func (w *chunkWriter) ReadFrom(src io.Reader) (int64, error) {
	rf, ok := w.ResponseWriter.(io.ReaderFrom)
	if !ok {
		buf := copyBufs.Get().(*[writeChunk]byte)
		defer copyBufs.Put(buf)
		return io.CopyBuffer(writerOnly{w}, src, buf[:])
	}
	if err := w.FlushError(); err != nil {
		return 0, err
	}
	base, left := src, int64(-1) // −1: until EOF
	if lr, ok := src.(*io.LimitedReader); ok {
		base, left = lr.R, lr.N
		defer func() { lr.N = left }()
	}
	var n int64
	for first := true; left != 0; first = false {
		k := int64(writeChunk)
		if left > 0 {
			k = min(k, left)
		}
		w.lr = io.LimitedReader{R: base, N: k}
		if !first {
			w.pace()
		}
		m, err := rf.ReadFrom(&w.lr)
		n += m
		if left > 0 {
			left -= m
		}
		if err != nil {
			return n, w.failed(err)
		}
		if m < k {
			break // EOF
		}
	}
	return n, nil
}

// copyBufs are ReadFrom's buffers where the writer has no ReadFrom.
var copyBufs = sync.Pool{New: func() any { return new([writeChunk]byte) }}

// writerOnly hides a writer's ReadFrom from io.Copy.
type writerOnly struct{ io.Writer }

// endPacing gives a response that committed no body write a fresh write
// deadline for the headers net/http writes after the handler returned
// (the server's own write timeout counts from the request's arrival).
func (w *chunkWriter) endPacing() {
	if !w.paced {
		_ = w.dl.SetWriteDeadline(time.Now().Add(writeChunkTimeout))
	}
}

// FlushError flushes the underlying writer (http.ResponseController) under
// a fresh write deadline; the headers commit.
func (w *chunkWriter) FlushError() error {
	w.commit()
	w.pace()
	if f, ok := w.ResponseWriter.(interface{ FlushError() error }); ok { // net/http's writer
		return w.failedFlush(f.FlushError())
	}
	return w.failedFlush(http.NewResponseController(w.ResponseWriter).Flush())
}

// failedFlush counts a flush's write timeout.
func (w *chunkWriter) failedFlush(err error) error {
	if err != nil {
		return w.failed(err)
	}
	return nil
}

// Flush implements http.Flusher.
func (w *chunkWriter) Flush() { _ = w.FlushError() }

// Unwrap gives http.ResponseController the underlying writer.
func (w *chunkWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
