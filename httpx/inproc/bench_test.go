package inproc_test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/ronhq/ron/httpx/inproc"
)

// BenchmarkRoundTrip64KiB measures one GET whose handler writes a 64 KiB
// body, read to the end by the caller.
func BenchmarkRoundTrip64KiB(b *testing.B) {
	payload := bytes.Repeat([]byte("r"), 64<<10)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(payload)))
		_, _ = w.Write(payload)
	})
	tr := inproc.New(h)
	req, err := http.NewRequest(http.MethodGet, "http://storage.inproc/o/x", nil)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 32<<10)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		resp, err := tr.RoundTrip(req)
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
