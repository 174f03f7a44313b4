package edge

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// pacedRecorder records what a chunkWriter does to the writer below it:
// deadlines set, ReadFrom calls (and the bytes each asked for), flushes.
type pacedRecorder struct {
	*httptest.ResponseRecorder
	deadlines int
	pieces    []int64
	flushes   int
	failAfter int // ReadFrom calls before an os.ErrDeadlineExceeded (0 = never)
}

func (w *pacedRecorder) SetWriteDeadline(time.Time) error { w.deadlines++; return nil }

func (w *pacedRecorder) FlushError() error { w.flushes++; return nil }

func (w *pacedRecorder) ReadFrom(src io.Reader) (int64, error) {
	if w.failAfter > 0 && len(w.pieces) == w.failAfter {
		return 0, os.ErrDeadlineExceeded
	}
	lr := src.(*io.LimitedReader)
	w.pieces = append(w.pieces, lr.N)
	return io.Copy(w.ResponseRecorder, src)
}

// committed counts the commits a chunkWriter reports.
type committed struct{ n int }

func (c *committed) commit(h http.Header) { c.n++; h.Set("X-Committed", "yes") }

// TestChunkWriterReadFrom: a body section goes to the writer's ReadFrom in
// pieces of at most 64 KiB, each under its own deadline, after the headers
// were flushed; the caller's LimitedReader is left with what was not read.
func TestChunkWriterReadFrom(t *testing.T) {
	body := bytes.Repeat([]byte("abcdefgh"), 20<<10) // 160 KiB
	rows := []struct {
		name      string
		src       func() io.Reader
		n         int64
		pieces    []int64
		remaining int64
	}{
		{"section", func() io.Reader { return &io.LimitedReader{R: bytes.NewReader(body), N: int64(len(body))} },
			int64(len(body)), []int64{64 << 10, 64 << 10, 32 << 10}, 0},
		{"section of a shorter source", func() io.Reader { return &io.LimitedReader{R: bytes.NewReader(body[:70<<10]), N: 100 << 10} },
			70 << 10, []int64{64 << 10, 36 << 10}, 30 << 10},
		{"reader to EOF", func() io.Reader { return bytes.NewReader(body[:1000]) }, 1000, []int64{64 << 10}, 0},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			rec := &pacedRecorder{ResponseRecorder: httptest.NewRecorder()}
			hook := &committed{}
			w := &chunkWriter{}
			w.init(rec, incFunc(func() {}), hook)
			src := row.src()
			n, err := w.ReadFrom(src)
			if err != nil || n != row.n {
				t.Fatalf("ReadFrom = %d, %v; want %d", n, err, row.n)
			}
			if !bytes.Equal(rec.Body.Bytes(), body[:n]) {
				t.Fatal("bytes differ")
			}
			if len(rec.pieces) != len(row.pieces) || rec.pieces[0] != row.pieces[0] || rec.pieces[len(rec.pieces)-1] != row.pieces[len(row.pieces)-1] {
				t.Fatalf("pieces %v, want %v", rec.pieces, row.pieces)
			}
			if rec.flushes != 1 || rec.deadlines != len(rec.pieces) || hook.n != 1 || rec.Header().Get("X-Committed") != "yes" {
				t.Fatalf("flushes %d deadlines %d commits %d", rec.flushes, rec.deadlines, hook.n)
			}
			if lr, ok := src.(*io.LimitedReader); ok && lr.N != row.remaining {
				t.Fatalf("left %d, want %d", lr.N, row.remaining)
			}
		})
	}
}

// TestChunkWriterReadFromTimeout: a piece hitting its write deadline is
// counted once.
func TestChunkWriterReadFromTimeout(t *testing.T) {
	rec := &pacedRecorder{ResponseRecorder: httptest.NewRecorder(), failAfter: 1}
	timeouts := 0
	w := newChunkWriter(rec, func() { timeouts++ })
	_, err := w.ReadFrom(&io.LimitedReader{R: strings.NewReader(strings.Repeat("x", 100<<10)), N: 100 << 10})
	if !errors.Is(err, os.ErrDeadlineExceeded) || timeouts != 1 {
		t.Fatalf("err %v, timeouts %d", err, timeouts)
	}
}

// TestChunkWriterReadFromPlain: under a writer without ReadFrom the copy
// goes through Write, paced the same way.
func TestChunkWriterReadFromPlain(t *testing.T) {
	rec := httptest.NewRecorder()
	cw := &countingWriter{ResponseWriter: rec}
	w := newChunkWriter(cw, func() {})
	n, err := w.ReadFrom(strings.NewReader(strings.Repeat("y", 150<<10)))
	if err != nil || n != 150<<10 || rec.Body.Len() != 150<<10 {
		t.Fatalf("ReadFrom = %d, %v", n, err)
	}
	for _, k := range cw.writes {
		if k > writeChunk {
			t.Fatalf("a write of %d bytes", k)
		}
	}
}

// TestChunkWriterCommit: the final headers commit once, on WriteHeader ≥
// 200, a write or a flush; an interim 1xx does not commit.
func TestChunkWriterCommit(t *testing.T) {
	rows := []struct {
		name string
		run  func(w *chunkWriter)
		want int
	}{
		{"interim only", func(w *chunkWriter) { w.WriteHeader(http.StatusEarlyHints) }, 0},
		{"interim then final", func(w *chunkWriter) {
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusOK)
		}, 1},
		{"write", func(w *chunkWriter) {
			_, _ = w.Write([]byte("a"))
			_, _ = w.Write([]byte("b"))
		}, 1},
		{"flush", func(w *chunkWriter) { w.Flush() }, 1},
		{"nothing", func(*chunkWriter) {}, 0},
	}
	for _, row := range rows {
		hook := &committed{}
		w := &chunkWriter{}
		w.init(httptest.NewRecorder(), incFunc(func() {}), hook)
		row.run(w)
		if hook.n != row.want {
			t.Errorf("%s: %d commits, want %d", row.name, hook.n, row.want)
		}
	}
}

// TestEndPacing: an answer without a body write gets one fresh write
// deadline at the end; one with a body write needs none.
func TestEndPacing(t *testing.T) {
	for _, wrote := range []bool{false, true} {
		rec := &pacedRecorder{ResponseRecorder: httptest.NewRecorder()}
		w := newChunkWriter(rec, func() {})
		if wrote {
			_, _ = w.Write([]byte("x"))
		}
		before := rec.deadlines
		w.endPacing()
		if added := rec.deadlines - before; wrote && added != 0 || !wrote && added != 1 {
			t.Errorf("wrote %v: endPacing set %d deadlines", wrote, added)
		}
	}
}

// TestFirstByteLazy: nothing is armed until someone waits; stop before
// arming still cancels; a child context ends with it at the deadline; a
// committed answer never ends by the deadline.
func TestFirstByteLazy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var committed atomic.Bool
		c := &firstByteCtx{}
		c.init(context.Background(), time.Second, &committed)
		if c.Err() != nil || c.Value("k") != nil || c.inner.Load() != nil {
			t.Fatal("armed by Err or Value")
		}
		child, cancel := context.WithCancel(c)
		defer cancel()
		if c.inner.Load() == nil {
			t.Fatal("a child context did not arm")
		}
		<-child.Done()
		if !errors.Is(c.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(c), context.DeadlineExceeded) {
			t.Fatalf("Err %v, Cause %v", c.Err(), context.Cause(c))
		}
		c.stop()

		s := &firstByteCtx{}
		s.init(context.Background(), time.Second, &committed)
		s.stop()
		if !errors.Is(s.Err(), context.Canceled) {
			t.Fatalf("stopped unarmed: Err %v", s.Err())
		}
		select {
		case <-s.Done():
		default:
			t.Fatal("stopped, Done open")
		}

		var done atomic.Bool
		k := &firstByteCtx{}
		k.init(context.Background(), time.Second, &done)
		wait := k.Done()
		done.Store(true)
		time.Sleep(time.Hour)
		select {
		case <-wait:
			t.Fatal("committed answer ended by the first-byte deadline")
		default:
		}
		k.stop()
		<-wait
	})
}

// TestFirstByteCauseUnarmed: context.Cause of an unarmed context past its
// deadline agrees with Err.
func TestFirstByteCauseUnarmed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var committed atomic.Bool
		c := &firstByteCtx{}
		c.init(context.Background(), time.Second, &committed)
		time.Sleep(2 * time.Second)
		if got := context.Cause(c); !errors.Is(got, context.DeadlineExceeded) {
			t.Fatalf("Cause %v", got)
		}
		c.stop()
	})
}

// incFunc adapts a func to incer.
type incFunc func()

// Inc implements incer.
func (f incFunc) Inc() { f() }

// newChunkWriter returns a chunkWriter over w counting write timeouts with
// timeouts.
func newChunkWriter(w http.ResponseWriter, timeouts func()) *chunkWriter {
	cw := &chunkWriter{}
	cw.init(w, incFunc(timeouts), nil)
	return cw
}
