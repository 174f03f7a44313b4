package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/ronhq/ron/httpx"
)

// copyChunk is the unit of copied bodies: each one must progress within
// ForwardTimeout (docs/gateway.md §3.8).
const copyChunk = 64 << 10

// copyBuffers recycles the copy buffers of Serve over HTTP.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, copyChunk); return &b }}

// Commit decides about the final answer of a Serve call (one that will not
// be retried), given its status and header; the header is the upstream's,
// read-only and valid during the call only. It returns false to decline the
// answer, or prepares the client's response header (docs/gateway.md §6
// hygiene) and returns true, after which Serve writes the status and body.
type Commit func(status int, h http.Header) bool

// Serve forwards c as Do does and answers the client through w. When an
// answer is final, commit is called with its status and header: declined,
// its body is discarded; accepted, Serve writes the status to w and then the
// body, each write preceded by a write deadline of ForwardTimeout through
// http.ResponseController (ignored where unsupported), with a flush after
// every write of a Stream call. Results:
//   - served false, status 0, err: no answer (the errors of Do);
//   - served false, status, nil: commit declined the answer with status;
//   - served true, status, nil: the answer was written whole;
//   - served true, status, err: the body failed after the status was
//     written (ErrStalled, the upstream broke off, a write to w failed or
//     ctx ended): the caller must abort the response, never end it cleanly.
//
// In-process calls without a body (not Stream) are served directly: the
// role's handler runs in the caller's goroutine and writes through w, with
// no goroutine, pipe or copy. Retries (decided when the handler commits its
// headers: a 502/503/504 answer that will be retried is discarded), the
// breaker, metrics, the deadline and progress limit, the link headers and
// principal are those of Do; but the handler is not abandoned when the
// deadline passes: its context ends, and Serve returns once it has returned.
// Other calls go through Do, and the body is copied in 64 KiB chunks.
func (l *Link) Serve(ctx context.Context, c Call, w http.ResponseWriter, commit Commit) (served bool, status int, err error) {
	if l.local != nil && !c.Stream && (c.Body == nil || c.Body == http.NoBody) {
		return l.serveDirect(ctx, c, w, commit)
	}
	resp, err := l.Do(ctx, c)
	if err != nil {
		return false, 0, err
	}
	defer resp.Body.Close()
	if !commit(resp.StatusCode, resp.Header) {
		return false, resp.StatusCode, nil
	}
	w.WriteHeader(resp.StatusCode)
	if c.Stream {
		_ = http.NewResponseController(w).Flush() // the client sees the stream open before its first event
	}
	if c.Method == http.MethodHead || !httpx.BodyAllowed(resp.StatusCode) {
		return true, resp.StatusCode, nil
	}
	return true, resp.StatusCode, l.copyBody(w, resp.Body, c.Stream)
}

// copyBody copies src to w in chunks, extending the write deadline before
// each one; a stream is flushed after every chunk.
func (l *Link) copyBody(w http.ResponseWriter, src io.Reader, stream bool) error {
	rc := http.NewResponseController(w)
	d := l.Policy().ForwardTimeout
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	buf := *bp
	for {
		n, err := src.Read(buf)
		if n > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(d))
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			if stream {
				_ = rc.Flush()
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
