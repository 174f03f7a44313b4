package admission

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ronhq/ron/httpx"
)

func TestBodyCap(t *testing.T) {
	tests := []struct {
		name   string
		length int64
		max    int64
		err    bool
	}{
		{"unknown length", -1, 10, false},
		{"empty", 0, 10, false},
		{"at the cap", 10, 10, false},
		{"one over", 11, 10, true},
		{"zero cap, empty", 0, 0, false},
		{"zero cap, one byte", 1, 0, true},
		{"no cap", 1 << 40, -1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPut, "/names/x", strings.NewReader(""))
			r.ContentLength = tc.length
			err := BodyCap(r, tc.max)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				wantBodyCap(t, err)
			}
		})
	}
}

func wantBodyCap(t *testing.T, err error) {
	t.Helper()
	he := httpx.AsError(err)
	if !errors.Is(err, ErrBodyCap) || he.Status != http.StatusRequestEntityTooLarge ||
		he.Code != httpx.CodePayloadTooLarge || he.Details["limit"] != "body_cap" {
		t.Fatalf("err = %+v, want 413 payload_too_large body_cap", err)
	}
}

// closer records Close.
type closer struct {
	io.Reader
	closed bool
}

func (c *closer) Close() error { c.closed = true; return nil }

func TestCapReader(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		max     int64
		oneByte bool // the source yields one byte per read
		over    bool
	}{
		{"empty, zero cap", 0, 0, false, false},
		{"under", 99, 100, false, false},
		{"at the cap", 100, 100, false, false},
		{"at the cap, byte by byte", 100, 100, true, false},
		{"one over", 101, 100, false, true},
		{"one over, byte by byte", 101, 100, true, true},
		{"far over", 1 << 20, 1000, false, true},
		{"zero cap, one byte", 1, 0, false, true},
		{"no cap", 1 << 16, -1, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var src io.Reader = bytes.NewReader(bytes.Repeat([]byte{'x'}, tc.size))
			if tc.oneByte {
				src = iotest.OneByteReader(src)
			}
			body := &closer{Reader: src}
			rc := CapReader(body, tc.max)
			got, err := io.ReadAll(rc)
			if !tc.over {
				if err != nil || len(got) != tc.size {
					t.Fatalf("read %d bytes, %v", len(got), err)
				}
			} else {
				wantBodyCap(t, err)
				if int64(len(got)) != tc.max {
					t.Fatalf("read %d bytes before the breach, want %d", len(got), tc.max)
				}
				if _, again := rc.Read(make([]byte, 8)); !errors.Is(again, ErrBodyCap) {
					t.Fatalf("not sticky: %v", again)
				}
			}
			if rc.Close(); !body.closed {
				t.Fatal("Close not passed on")
			}
		})
	}
}

func TestCapReaderPassThrough(t *testing.T) {
	if CapReader(nil, 10) != nil || CapReader(http.NoBody, 10) != http.NoBody {
		t.Fatal("nil or NoBody wrapped")
	}
	boom := errors.New("connection reset")
	rc := CapReader(io.NopCloser(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom))), 10)
	got, err := io.ReadAll(rc)
	if string(got) != "abc" || !errors.Is(err, boom) {
		t.Fatalf("got %q, %v", got, err)
	}
}

// TestCapReaderStreaming: a chunked upload is counted as it streams and
// the read passing the cap fails while the sender is still writing.
func TestCapReaderStreaming(t *testing.T) {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		var err error
		for i := 0; err == nil && i < 100; i++ {
			_, err = pw.Write(make([]byte, 1000))
		}
		done <- err
	}()
	rc := CapReader(pr, 4500)
	n, err := io.Copy(io.Discard, rc)
	wantBodyCap(t, err)
	if n != 4500 {
		t.Fatalf("copied %d", n)
	}
	_ = pr.CloseWithError(err) // abort the sender
	if err := <-done; !errors.Is(err, ErrBodyCap) {
		t.Fatalf("sender not aborted: %v", err)
	}
}
