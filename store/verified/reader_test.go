package verified_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/storetest"
	"github.com/ronhq/ron/store/verified"
)

const cs = store.ChunkSize

// spanOf returns the bytes of chunks first..last of data.
func spanOf(l verified.List, data []byte, first, last int) []byte {
	off, n := l.Span(first, last)
	return data[off : off+n]
}

// flip returns a copy of b with byte i changed.
func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x5a
	return c
}

func TestReaderTable(t *testing.T) {
	data := storetest.Pattern(3*cs + 1000) // 4 chunks
	l := verified.ListOf(data)
	all := data
	for _, tc := range []struct {
		name        string
		body        []byte
		first, last int
		whole       bool
		want        []byte // bytes returned before the error
		err         error  // nil: clean EOF
	}{
		{"whole", all, 0, 3, true, all, nil},
		{"whole without whole check", all, 0, 3, false, all, nil},
		{"middle chunk", spanOf(l, data, 1, 1), 1, 1, false, spanOf(l, data, 1, 1), nil},
		{"range to end", spanOf(l, data, 2, 3), 2, 3, true, spanOf(l, data, 2, 3), nil}, // whole ignored
		{"last chunk only", spanOf(l, data, 3, 3), 3, 3, false, spanOf(l, data, 3, 3), nil},
		{"chunk 0 wrong", flip(all, 7), 0, 3, true, nil, verified.ErrMismatch},
		{"chunk 2 wrong", flip(all, 2*cs+1), 0, 3, true, all[:2*cs], verified.ErrMismatch},
		{"last chunk wrong", flip(all, len(all)-1), 0, 3, true, all[:3*cs], verified.ErrMismatch},
		{"short mid chunk", all[:cs+10], 0, 3, true, all[:cs], verified.ErrShort},
		{"short at boundary", all[:2*cs], 0, 3, true, all[:2*cs], verified.ErrShort},
		{"short last byte", all[:len(all)-1], 0, 3, true, all[:3*cs], verified.ErrShort},
		{"empty body", nil, 0, 3, true, nil, verified.ErrShort},
		{"one extra byte", append(bytes.Clone(all), 0), 0, 3, true, all[:3*cs], verified.ErrLong},
		{"extra after range", spanOf(l, data, 1, 2), 1, 1, false, nil, verified.ErrLong},
		{"range wrong", flip(spanOf(l, data, 1, 2), cs+3), 1, 2, false, spanOf(l, data, 1, 1), verified.ErrMismatch},
		{"bad range", all, 2, 4, false, nil, verified.ErrBadList},
		{"negative first", all, -1, 0, false, nil, verified.ErrBadList},
		{"first past last", all, 3, 1, false, nil, verified.ErrBadList},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []string{"read", "next", "writeto", "onebyte"} {
				got, err := drain(verified.NewReader(bytes.NewReader(tc.body), l, tc.first, tc.last, tc.whole), mode)
				if tc.err == nil && err != nil || tc.err != nil && !errors.Is(err, tc.err) {
					t.Fatalf("%s: err = %v, want %v", mode, err, tc.err)
				}
				if !bytes.Equal(got, tc.want) {
					t.Fatalf("%s: returned %d bytes, want %d", mode, len(got), len(tc.want))
				}
			}
		})
	}
}

// drain reads r to the end in one of several styles and returns the bytes
// and the first error other than io.EOF.
func drain(r *verified.Reader, mode string) ([]byte, error) {
	var out bytes.Buffer
	switch mode {
	case "writeto":
		_, err := r.WriteTo(&out)
		return out.Bytes(), err
	case "next":
		for {
			b, err := r.Next()
			if err != nil {
				return out.Bytes(), eofNil(err)
			}
			out.Write(b)
		}
	case "onebyte":
		_, err := io.Copy(&out, iotest.OneByteReader(r))
		return out.Bytes(), err
	}
	buf := make([]byte, 1000)
	for {
		n, err := r.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			return out.Bytes(), eofNil(err)
		}
	}
}

func eofNil(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

// A provider whose list matches its own wrong bytes: every chunk checks
// out, the whole hash does not, and the last chunk is never released.
func TestReaderWholeMismatchHoldsLastChunk(t *testing.T) {
	data := storetest.Pattern(2*cs + 500)
	wrong := flip(data, cs+1)
	l := verified.ListOf(wrong)
	l.ID = verified.ListOf(data).ID // the id asked for; the list is the provider's
	r := verified.NewReader(bytes.NewReader(wrong), l, 0, 2, true)
	got, err := drain(r, "next")
	var me *verified.MismatchError
	if !errors.As(err, &me) || me.Chunk != -1 {
		t.Fatalf("err = %v, want a whole-hash MismatchError", err)
	}
	if !bytes.Equal(got, wrong[:2*cs]) {
		t.Fatalf("released %d bytes, want the first two chunks only", len(got))
	}
	// Errors are sticky.
	if _, err2 := r.Next(); !errors.Is(err2, verified.ErrMismatch) {
		t.Fatalf("second Next = %v", err2)
	}
	// A one-chunk object is fully verified before any byte is released.
	small := []byte("hello world")
	sl := verified.ListOf([]byte("hello wOrld"))
	sl.ID = verified.ListOf(small).ID
	if b, err := verified.NewReader(strings.NewReader("hello wOrld"), sl, 0, 0, true).Next(); b != nil || !errors.Is(err, verified.ErrMismatch) {
		t.Fatalf("small: %q, %v", b, err)
	}
	// The same partial range is not whole-checked: the list is trusted.
	if got, err := drain(verified.NewReader(bytes.NewReader(wrong[:cs]), l, 0, 0, true), "next"); err != nil || len(got) != cs {
		t.Fatalf("partial range: %d, %v", len(got), err)
	}
}

func TestReaderChunkMismatchIndex(t *testing.T) {
	data := storetest.Pattern(3 * cs)
	l := verified.ListOf(data)
	_, err := drain(verified.NewReader(bytes.NewReader(flip(data, 2*cs)), l, 0, 2, true), "next")
	var me *verified.MismatchError
	if !errors.As(err, &me) || me.Chunk != 2 || !strings.Contains(err.Error(), "chunk 2") {
		t.Fatalf("err = %v", err)
	}
}

func TestReaderEmptyObject(t *testing.T) {
	l := verified.ListOf(nil)
	if got, err := drain(verified.NewReader(strings.NewReader(""), l, 0, -1, true), "next"); err != nil || len(got) != 0 {
		t.Fatalf("empty: %q, %v", got, err)
	}
	if _, err := drain(verified.NewReader(strings.NewReader("x"), l, 0, -1, true), "next"); !errors.Is(err, verified.ErrLong) {
		t.Fatalf("empty with a byte: %v", err)
	}
	lying := l
	lying.ID = store.Sum([]byte("not empty"))
	if _, err := drain(verified.NewReader(strings.NewReader(""), lying, 0, -1, true), "next"); !errors.Is(err, verified.ErrMismatch) {
		t.Fatalf("empty list for a non-empty id: %v", err)
	}
}

func TestReaderInconsistentList(t *testing.T) {
	l := verified.ListOf(storetest.Pattern(cs + 1))
	l.Chunks = l.Chunks[:1]
	if _, err := verified.NewReader(strings.NewReader(""), l, 0, 0, false).Next(); !errors.Is(err, verified.ErrBadList) {
		t.Fatalf("err = %v", err)
	}
}

func TestReaderOffset(t *testing.T) {
	data := storetest.Pattern(3*cs + 7)
	l := verified.ListOf(data)
	r := verified.NewReader(bytes.NewReader(spanOf(l, data, 1, 3)), l, 1, 3, false)
	if r.Offset() != cs {
		t.Fatalf("start offset %d", r.Offset())
	}
	buf := make([]byte, 100)
	if n, err := r.Read(buf); n != 100 || err != nil || r.Offset() != cs+100 || !bytes.Equal(buf, data[cs:cs+100]) {
		t.Fatalf("Read = %d, %v; offset %d", n, err, r.Offset())
	}
	b, err := r.Next() // the rest of chunk 1
	if err != nil || len(b) != cs-100 || r.Offset() != 2*cs {
		t.Fatalf("Next = %d, %v; offset %d", len(b), err, r.Offset())
	}
}

// errAfter fails with err once n bytes were read.
type errAfter struct {
	r   io.Reader
	err error
}

func (e *errAfter) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		return n, e.err
	}
	return n, err
}

func TestReaderUnderlyingError(t *testing.T) {
	data := storetest.Pattern(2 * cs)
	l := verified.ListOf(data)
	boom := errors.New("connection reset")
	got, err := drain(verified.NewReader(&errAfter{bytes.NewReader(data[:cs+3]), boom}, l, 0, 1, true), "next")
	if !errors.Is(err, boom) || errors.Is(err, verified.ErrShort) || len(got) != cs {
		t.Fatalf("got %d bytes, err %v", len(got), err)
	}
	// An error right after the last byte is not a clean end either.
	got, err = drain(verified.NewReader(&errAfter{bytes.NewReader(data), boom}, l, 0, 1, true), "next")
	if !errors.Is(err, boom) || len(got) != cs {
		t.Fatalf("trailing error: got %d bytes, err %v", len(got), err)
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestReaderWriteToError(t *testing.T) {
	data := storetest.Pattern(cs)
	n, err := verified.NewReader(bytes.NewReader(data), verified.ListOf(data), 0, 0, true).WriteTo(errWriter{})
	if n != 0 || !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("WriteTo = %d, %v", n, err)
	}
}
