package edge

import (
	"context"
	"errors"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/httpx"
)

// Write pacing of streamed bodies (spec/edge.md §2): once the first byte is
// out, every chunk of at most writeChunk bytes must be written within
// writeChunkTimeout.
const (
	writeChunk        = 64 << 10
	writeChunkTimeout = httpx.WriteTimeout
)

// Request-Timeout bounds (§2): decimal seconds within 0.001–3600.
const (
	minRequestTimeout = time.Millisecond
	headerRequestMax  = time.Hour
)

var requestTimeoutRE = regexp.MustCompile(`^[0-9]{1,4}(\.[0-9]{1,9})?$`)

// requestTimeout is the handler deadline of r: def, or a shorter
// Request-Timeout. A Request-Timeout that is not decimal seconds within
// 0.001–3600, or that is repeated, is a 400.
func requestTimeout(r *http.Request, def time.Duration) (time.Duration, error) {
	vs := r.Header.Values("Request-Timeout")
	if len(vs) == 0 {
		return def, nil
	}
	bad := httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "Request-Timeout must be decimal seconds within 0.001–3600")
	if len(vs) > 1 || !requestTimeoutRE.MatchString(vs[0]) {
		return 0, bad
	}
	f, err := strconv.ParseFloat(vs[0], 64)
	d := time.Duration(f * float64(time.Second))
	if err != nil || d < minRequestTimeout || d > headerRequestMax {
		return 0, bad
	}
	return min(d, def), nil
}

// firstByteCtx is a request context whose deadline bounds the time to the
// first byte only: its Done closes at the deadline unless the response was
// committed by then (or when the parent ends). Deadline always reports the
// deadline, so queued work can see the client's; after the commit the
// writes' own pacing (chunkWriter) bounds the response instead.
type firstByteCtx struct {
	context.Context // a WithCancelCause child of the request's context
	deadline        time.Time
}

// Deadline implements context.Context.
func (c firstByteCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// Err reports context.DeadlineExceeded when the first-byte deadline fired.
func (c firstByteCtx) Err() error {
	err := c.Context.Err()
	if err != nil && errors.Is(context.Cause(c.Context), context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return err
}

// firstByte returns a firstByteCtx of parent ending d from now unless
// committed reports true by then, and its stop (call it when the handler
// returns).
func firstByte(parent context.Context, d time.Duration, committed *atomic.Bool) (context.Context, func()) {
	deadline := time.Now().Add(d)
	if pd, ok := parent.Deadline(); ok && pd.Before(deadline) {
		deadline = pd
	}
	ctx, cancel := context.WithCancelCause(parent)
	t := time.AfterFunc(time.Until(deadline), func() {
		if !committed.Load() {
			cancel(context.DeadlineExceeded)
		}
	})
	return firstByteCtx{Context: ctx, deadline: deadline}, func() {
		t.Stop()
		cancel(context.Canceled)
	}
}

// chunkWriter paces a response: every write goes out in pieces of at most
// writeChunk bytes, each under a fresh write deadline of writeChunkTimeout
// (ignored where the connection has none, e.g. in-process). The first
// write timeout is counted in ron_io_timeouts_total{op="write"}.
type chunkWriter struct {
	http.ResponseWriter
	rc       *http.ResponseController
	timeouts func()
	timedOut bool
}

func newChunkWriter(w http.ResponseWriter, timeouts func()) *chunkWriter {
	return &chunkWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeouts: timeouts}
}

// Write implements io.Writer.
func (w *chunkWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), writeChunk)
		_ = w.rc.SetWriteDeadline(time.Now().Add(writeChunkTimeout))
		m, err := w.ResponseWriter.Write(p[:k])
		n += m
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && !w.timedOut {
				w.timedOut = true
				w.timeouts()
			}
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}

// FlushError flushes the underlying writer (http.ResponseController).
func (w *chunkWriter) FlushError() error { return w.rc.Flush() }

// Flush implements http.Flusher.
func (w *chunkWriter) Flush() { _ = w.rc.Flush() }

// Unwrap gives http.ResponseController the underlying writer.
func (w *chunkWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
