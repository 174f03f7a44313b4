package sites

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestSizeWriter(t *testing.T) {
	for _, c := range []struct {
		name     string
		code     int
		hdr      map[string]string
		mismatch int64 // -1: none reported
	}{
		{"200 equal", 200, map[string]string{"Content-Length": "5"}, -1},
		{"200 differs", 200, map[string]string{"Content-Length": "7"}, 7},
		{"206 differs", 206, map[string]string{"Content-Range": "bytes 0-0/9"}, 9},
		{"206 equal", 206, map[string]string{"Content-Range": "bytes 1-2/5"}, -1},
		{"206 multipart", 206, map[string]string{"Content-Type": "multipart/byteranges; boundary=x"}, -1},
		{"304", 304, nil, -1},
		{"200 no length", 200, nil, -1},
		{"206 garbage", 206, map[string]string{"Content-Range": "items 1/9"}, -1},
	} {
		rec := httptest.NewRecorder()
		got := int64(-1)
		w := &sizeWriter{ResponseWriter: rec, want: 5, mismatch: func(n int64) { got = n }}
		for k, v := range c.hdr {
			w.Header().Set(k, v)
		}
		w.WriteHeader(http.StatusEarlyHints) // informational: not checked
		w.WriteHeader(c.code)
		_, _ = w.Write([]byte("x")) // already checked: no second report
		if got != c.mismatch {
			t.Fatalf("%s: mismatch %d, want %d", c.name, got, c.mismatch)
		}
	}
}

func TestSizeWriterFlushAndController(t *testing.T) {
	rec := httptest.NewRecorder()
	reports := 0
	w := &sizeWriter{ResponseWriter: rec, want: 1, mismatch: func(int64) { reports++ }}
	w.Header().Set("Content-Length", "3")
	w.Flush() // implicit 200: checked here
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		t.Fatal(err)
	}
	_ = rc.SetWriteDeadline(time.Time{}) // reaches the recorder through Unwrap (unsupported there)
	if reports != 1 || !rec.Flushed {
		t.Fatalf("reports %d, flushed %v", reports, rec.Flushed)
	}
}

func TestLeaderGoneError(t *testing.T) {
	lg := leaderGone{err: errNotFound()}
	if lg.Error() != errNotFound().Error() || lg.Unwrap() == nil {
		t.Fatal("leaderGone does not wrap")
	}
}
