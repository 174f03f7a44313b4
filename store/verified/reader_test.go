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
	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

const cs = store.ChunkSize

// spanOf returns the bytes of groups first..last of data.
func spanOf(tr verified.Tree, data []byte, first, last int) []byte {
	off, n := tr.Span(first, last)
	return data[off : off+n]
}

// flip returns a copy of b with byte i changed.
func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x5a
	return c
}

func TestReaderTable(t *testing.T) {
	data := storetest.Pattern(3*cs + 1000) // 4 groups
	tr := verified.TreeOf(data)
	all := data
	for _, tc := range []struct {
		name        string
		body        []byte
		first, last int
		want        []byte // bytes returned before the error
		err         error  // nil: clean EOF
	}{
		{"whole", all, 0, 3, all, nil},
		{"middle group", spanOf(tr, data, 1, 1), 1, 1, spanOf(tr, data, 1, 1), nil},
		{"range to end", spanOf(tr, data, 2, 3), 2, 3, spanOf(tr, data, 2, 3), nil},
		{"last group only", spanOf(tr, data, 3, 3), 3, 3, spanOf(tr, data, 3, 3), nil},
		{"group 0 wrong", flip(all, 7), 0, 3, nil, verified.ErrMismatch},
		{"group 2 wrong", flip(all, 2*cs+1), 0, 3, all[:2*cs], verified.ErrMismatch},
		{"last group wrong", flip(all, len(all)-1), 0, 3, all[:3*cs], verified.ErrMismatch},
		{"short mid group", all[:cs+10], 0, 3, all[:cs], verified.ErrShort},
		{"short at boundary", all[:2*cs], 0, 3, all[:2*cs], verified.ErrShort},
		{"short last byte", all[:len(all)-1], 0, 3, all[:3*cs], verified.ErrShort},
		{"empty body", nil, 0, 3, nil, verified.ErrShort},
		{"one extra byte", append(bytes.Clone(all), 0), 0, 3, all[:3*cs], verified.ErrLong},
		{"extra after range", spanOf(tr, data, 1, 2), 1, 1, nil, verified.ErrLong},
		{"range wrong", flip(spanOf(tr, data, 1, 2), cs+3), 1, 2, spanOf(tr, data, 1, 1), verified.ErrMismatch},
		{"another group's bytes", spanOf(tr, data, 1, 1), 2, 2, nil, verified.ErrMismatch},
		{"bad range", all, 2, 4, nil, verified.ErrBadOutboard},
		{"negative first", all, -1, 0, nil, verified.ErrBadOutboard},
		{"first past last", all, 3, 1, nil, verified.ErrBadOutboard},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []string{"read", "next", "writeto", "onebyte"} {
				got, err := drain(verified.NewReader(bytes.NewReader(tc.body), tr, tc.first, tc.last), mode)
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

// TestReaderLiars runs the lying sources of every reader's table (issue
// 16) through the Reader, whole and for ranges on and off group
// boundaries: every byte released is the object's own, and exactly the
// groups before the first bad one are released.
func TestReaderLiars(t *testing.T) {
	data := storetest.Pattern(5*cs + 1234)
	size := int64(len(data))
	for _, l := range vfetchtest.Liars(data) {
		t.Run(l.Name, func(t *testing.T) {
			tr, perr := verified.ParseTree(l.Outboard, l.ID)
			for _, r := range append(vfetchtest.Ranges(size), vfetchtest.Range{Start: 0, End: size - 1}) {
				first, last := verified.TreeOf(data).GroupRange(r.Start, r.End)
				off, n := verified.TreeOf(data).Span(first, last)
				got, err := drain(verified.NewReader(bytes.NewReader(l.Data[off:off+n]), tr, first, last), "next")
				if perr != nil {
					got, err = nil, perr
				}
				lo, hi := min(int64(len(got)), r.Start-off), min(int64(len(got)), r.End+1-off)
				want, complete := l.Delivers(data, r.Start, r.End)
				if !bytes.Equal(got[lo:hi], want) || complete != (err == nil) {
					t.Fatalf("%s: %d bytes, %v; want %d bytes, complete %v", r.Header(), hi-lo, err, len(want), complete)
				}
				if err != nil && !errors.Is(err, verified.ErrMismatch) && !errors.Is(err, verified.ErrBadOutboard) {
					t.Fatalf("%s: %v, want a mismatch or a bad outboard", r.Header(), err)
				}
			}
		})
	}
}

func TestReaderMismatchNamesGroup(t *testing.T) {
	data := storetest.Pattern(3 * cs)
	tr := verified.TreeOf(data)
	_, err := drain(verified.NewReader(bytes.NewReader(flip(data, 2*cs)), tr, 0, 2), "next")
	var me *verified.MismatchError
	if !errors.As(err, &me) || me.Group != 2 || !strings.Contains(err.Error(), "group 2") {
		t.Fatalf("err = %v", err)
	}
}

// The empty object: its stream must be empty, and its tree proves itself
// (size 0 only for the empty id).
func TestReaderEmptyObject(t *testing.T) {
	tr := verified.TreeOf(nil)
	if got, err := drain(verified.NewReader(strings.NewReader(""), tr, 0, -1), "next"); err != nil || len(got) != 0 {
		t.Fatalf("empty: %q, %v", got, err)
	}
	if _, err := drain(verified.NewReader(strings.NewReader("x"), tr, 0, -1), "next"); !errors.Is(err, verified.ErrLong) {
		t.Fatalf("empty with a byte: %v", err)
	}
	lying := tr
	lying.ID = store.Sum([]byte("not empty"))
	if _, err := drain(verified.NewReader(strings.NewReader(""), lying, 0, -1), "next"); !errors.Is(err, verified.ErrMismatch) {
		t.Fatalf("empty tree for a non-empty id: %v", err)
	}
	if _, err := verified.ParseTree(tr.Outboard, lying.ID); !errors.Is(err, verified.ErrMismatch) {
		t.Fatalf("ParseTree of an empty outboard for a non-empty id: %v", err)
	}
}

func TestReaderInconsistentTree(t *testing.T) {
	tr := verified.TreeOf(storetest.Pattern(cs + 1))
	tr.Outboard = tr.Outboard[:8]
	if _, err := verified.NewReader(strings.NewReader(""), tr, 0, 0).Next(); !errors.Is(err, verified.ErrBadOutboard) {
		t.Fatalf("err = %v", err)
	}
	tr = verified.TreeOf(storetest.Pattern(cs + 1))
	tr.Size--
	if _, err := verified.NewReader(strings.NewReader(""), tr, 0, 0).Next(); !errors.Is(err, verified.ErrBadOutboard) {
		t.Fatalf("size unlike the header: %v", err)
	}
}

func TestReaderOffset(t *testing.T) {
	data := storetest.Pattern(3*cs + 7)
	tr := verified.TreeOf(data)
	r := verified.NewReader(bytes.NewReader(spanOf(tr, data, 1, 3)), tr, 1, 3)
	if r.Offset() != cs {
		t.Fatalf("start offset %d", r.Offset())
	}
	buf := make([]byte, 100)
	if n, err := r.Read(buf); n != 100 || err != nil || r.Offset() != cs+100 || !bytes.Equal(buf, data[cs:cs+100]) {
		t.Fatalf("Read = %d, %v; offset %d", n, err, r.Offset())
	}
	b, err := r.Next() // the rest of group 1
	if err != nil || len(b) != cs-100 || r.Offset() != 2*cs {
		t.Fatalf("Next = %d, %v; offset %d", len(b), err, r.Offset())
	}
}

// errAfter fails with err once its reader is exhausted.
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
	tr := verified.TreeOf(data)
	boom := errors.New("connection reset")
	got, err := drain(verified.NewReader(&errAfter{bytes.NewReader(data[:cs+3]), boom}, tr, 0, 1), "next")
	if !errors.Is(err, boom) || errors.Is(err, verified.ErrShort) || len(got) != cs {
		t.Fatalf("got %d bytes, err %v", len(got), err)
	}
	// An error right after the last byte is not a clean end either.
	got, err = drain(verified.NewReader(&errAfter{bytes.NewReader(data), boom}, tr, 0, 1), "next")
	if !errors.Is(err, boom) || len(got) != cs {
		t.Fatalf("trailing error: got %d bytes, err %v", len(got), err)
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestReaderWriteToError(t *testing.T) {
	data := storetest.Pattern(cs)
	n, err := verified.NewReader(bytes.NewReader(data), verified.TreeOf(data), 0, 0).WriteTo(errWriter{})
	if n != 0 || !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("WriteTo = %d, %v", n, err)
	}
}

// Errors are sticky.
func TestReaderSticky(t *testing.T) {
	data := storetest.Pattern(2 * cs)
	r := verified.NewReader(bytes.NewReader(flip(data, cs)), verified.TreeOf(data), 0, 1)
	if _, err := drain(r, "next"); !errors.Is(err, verified.ErrMismatch) {
		t.Fatalf("first: %v", err)
	}
	if _, err := r.Next(); !errors.Is(err, verified.ErrMismatch) {
		t.Fatalf("second Next = %v", err)
	}
}
