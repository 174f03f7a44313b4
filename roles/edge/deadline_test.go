package edge

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestRequestTimeoutHeader: Request-Timeout is decimal seconds within
// 0.001–3600; a shorter one wins, a longer one does not; anything else is
// a 400.
func TestRequestTimeoutHeader(t *testing.T) {
	def := 5 * time.Second
	rows := []struct {
		values []string
		want   time.Duration
		bad    bool
	}{
		{nil, def, false},
		{[]string{"0.5"}, 500 * time.Millisecond, false},
		{[]string{"2"}, 2 * time.Second, false},
		{[]string{"0.001"}, time.Millisecond, false},
		{[]string{"3600"}, def, false},
		{[]string{"30"}, def, false},
		{[]string{"abc"}, 0, true},
		{[]string{"0"}, 0, true},
		{[]string{"0.0001"}, 0, true},
		{[]string{"3600.5"}, 0, true},
		{[]string{"-1"}, 0, true},
		{[]string{"1e3"}, 0, true},
		{[]string{"250ms"}, 0, true},
		{[]string{" 1"}, 0, true},
		{[]string{"1."}, 0, true},
		{[]string{"1", "2"}, 0, true},
	}
	for _, row := range rows {
		req := httptest.NewRequest(http.MethodGet, "/o/x", nil)
		for _, v := range row.values {
			req.Header.Add("Request-Timeout", v)
		}
		got, err := requestTimeout(req, def)
		if row.bad {
			if err == nil {
				t.Errorf("%q: accepted as %s", row.values, got)
			}
			continue
		}
		if err != nil || got != row.want {
			t.Errorf("%q = %s, %v; want %s", row.values, got, err, row.want)
		}
	}
}

// TestFirstByteDeadline: the context ends at the deadline while nothing
// is committed, and never once the response is committed.
func TestFirstByteDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var committed atomic.Bool
		ctx, stop := firstByte(context.Background(), 5*time.Second, &committed)
		defer stop()
		dl, ok := ctx.Deadline()
		if !ok || !dl.Equal(time.Now().Add(5*time.Second)) {
			t.Fatalf("Deadline = %v, %v", dl, ok)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("uncommitted at the deadline: Err = %v", ctx.Err())
		}

		var late atomic.Bool
		ctx2, stop2 := firstByte(context.Background(), time.Second, &late)
		late.Store(true) // the first byte went out in time
		time.Sleep(time.Hour)
		if ctx2.Err() != nil {
			t.Fatalf("committed: Err = %v", ctx2.Err())
		}
		stop2()
		if !errors.Is(ctx2.Err(), context.Canceled) {
			t.Fatalf("after stop: Err = %v", ctx2.Err())
		}
	})
}

// TestFirstByteParentDeadline: an earlier deadline of the caller (an
// in-process gateway) is kept.
func TestFirstByteParentDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		var committed atomic.Bool
		ctx, stop := firstByte(parent, 5*time.Second, &committed)
		defer stop()
		if dl, _ := ctx.Deadline(); !dl.Equal(time.Now().Add(time.Second)) {
			t.Fatalf("Deadline = %v", dl)
		}
		start := time.Now()
		<-ctx.Done()
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Fatalf("Err = %v after %s", ctx.Err(), time.Since(start))
		}
	})
}

// countingWriter records the size of every Write and can fail them.
type countingWriter struct {
	http.ResponseWriter
	writes []int
	err    error
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.writes = append(w.writes, len(p))
	return w.ResponseWriter.Write(p)
}

func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestChunkWriter: writes go out in pieces of at most 64 KiB; a write
// deadline hit is counted once.
func TestChunkWriter(t *testing.T) {
	rec := httptest.NewRecorder()
	cw := &countingWriter{ResponseWriter: rec}
	timeouts := 0
	w := newChunkWriter(cw, func() { timeouts++ })
	n, err := w.Write(make([]byte, 150<<10))
	if err != nil || n != 150<<10 {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if want := []int{64 << 10, 64 << 10, 22 << 10}; len(cw.writes) != 3 || cw.writes[0] != want[0] || cw.writes[2] != want[2] {
		t.Fatalf("pieces %v, want %v", cw.writes, want)
	}
	w.Flush()
	if !rec.Flushed {
		t.Error("Flush did not reach the recorder")
	}
	if http.NewResponseController(w).Flush() != nil {
		t.Error("ResponseController cannot flush through the writer")
	}
	cw.err = os.ErrDeadlineExceeded
	for range 2 {
		if _, err := w.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("failing write: %v", err)
		}
	}
	if timeouts != 1 {
		t.Fatalf("write timeouts counted %d times, want 1", timeouts)
	}
}

// firstByte returns a firstByteCtx of parent ending d from now unless
// committed reports true by then, and its stop (call it when the handler
// returns).
func firstByte(parent context.Context, d time.Duration, committed *atomic.Bool) (context.Context, func()) {
	c := &firstByteCtx{}
	c.init(parent, d, committed)
	return c, c.stop
}
