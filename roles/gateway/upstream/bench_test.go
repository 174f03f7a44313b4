package upstream

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
)

// BenchmarkDoInProcess64KiB measures one forwarded GET of a 64 KiB body
// through an in-process link, read to the end.
func BenchmarkDoInProcess64KiB(b *testing.B) {
	payload := bytes.Repeat([]byte("r"), 64<<10)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(payload)))
		_, _ = w.Write(payload)
	})
	l, err := New(Options{Name: "storage", Handler: h})
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 32<<10)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		resp, err := l.Do(context.Background(), Call{Method: http.MethodGet, Path: "/o/x"})
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.CopyBuffer(io.Discard, resp.Body, buf)
		resp.Body.Close()
		if err != nil || n != int64(len(payload)) {
			b.Fatalf("read %d, %v", n, err)
		}
	}
}
