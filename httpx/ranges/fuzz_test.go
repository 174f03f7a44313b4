package ranges

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/ronhq/ron/internal/iox"
)

// addRangeSeeds seeds f with every Range value of the matrix via add.
func addRangeSeeds(add func(header string)) {
	for _, c := range planCases {
		for i := 0; i+1 < len(c.h); i += 2 {
			if c.h[i] == "Range" {
				add(c.h[i+1])
			}
		}
	}
}

func FuzzParseRange(f *testing.F) {
	addRangeSeeds(func(h string) {
		f.Add(h, int64(100), 16)
		f.Add(h, int64(0), 16)
		f.Add(h, int64(1), 128)
	})
	f.Add("bytes=0-,0-", int64(1<<62), 2)
	f.Add("bytes=-9223372036854775807", int64(1<<63-1), 1)
	f.Add("bytes=0-0", int64(-5), 0)
	f.Fuzz(func(t *testing.T, header string, size int64, maxParts int) {
		rs, outcome := ParseRange(header, size, maxParts)
		if outcome != Satisfiable {
			if rs != nil {
				t.Fatalf("%v with ranges %v", outcome, rs)
			}
			if size <= 0 && outcome != Ignore {
				t.Fatalf("size %d gave %v", size, outcome)
			}
			return
		}
		if len(rs) == 0 || len(rs) > max(maxParts, 1) {
			t.Fatalf("%d ranges with cap %d", len(rs), maxParts)
		}
		var sum int64
		for _, r := range rs {
			if r.Start < 0 || r.Length < 1 || r.Start >= size || r.Length > size-r.Start {
				t.Fatalf("range %+v outside [0,%d)", r, size)
			}
			sum += r.Length
			if sum > size {
				t.Fatalf("lengths sum past %d: %v", size, rs)
			}
		}
	})
}

func FuzzPlanBody(f *testing.F) {
	addRangeSeeds(func(h string) {
		f.Add(h, "", "", uint32(100), uint8(16), "application/octet-stream")
		f.Add(h, `"b3:x"`, "", uint32(0), uint8(16), "")
	})
	f.Add("bytes=0-1", `W/"b3:x"`, `"a", W/"b3:x"`, uint32(10), uint8(1), "text/plain")
	f.Add("bytes=0-1,3-4", "", "*", uint32(5), uint8(2), "text/plain; charset=utf-8")
	f.Fuzz(func(t *testing.T, rng, ifRange, inm string, size32 uint32, maxParts uint8, ct string) {
		size := int64(size32 % (1 << 17))
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header["Range"] = []string{rng}
		if ifRange != "" {
			r.Header["If-Range"] = []string{ifRange}
		}
		if inm != "" {
			r.Header["If-None-Match"] = []string{inm}
		}
		p := NewPlan(r, size, testETag, ct, int(maxParts))
		h := http.Header{}
		p.SetHeaders(h, size, ct)
		cw := &iox.CountingWriter{W: io.Discard}
		var buf bytes.Buffer
		if p.Status == 206 && len(p.Ranges) > 1 {
			cw.W = &buf
		}
		if err := p.WriteBody(cw, size, ct, zeroReader(size)); err != nil {
			t.Fatal(err)
		}
		checkFuzzPlan(t, p, h, cw.N, size)
		if buf.Len() > 0 && validFieldValue(ct) {
			checkPartsCount(t, buf.Bytes(), h.Get("Content-Type"), len(p.Ranges))
		}
	})
}

// zeroReader is a WriteBody read function that writes n zero bytes and checks
// the bounds.
func zeroReader(size int64) func(w io.Writer, off, n int64) error {
	return func(w io.Writer, off, n int64) error {
		if off < 0 || n <= 0 || n > size-off {
			return io.ErrUnexpectedEOF
		}
		_, err := io.CopyN(w, zeros{}, n)
		return err
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// checkFuzzPlan checks the plan's invariants against what WriteBody wrote.
func checkFuzzPlan(t *testing.T, p Plan, h http.Header, written, size int64) {
	t.Helper()
	switch p.Status {
	case 200, 206:
		if written != p.ContentLength {
			t.Fatalf("wrote %d bytes, ContentLength %d", written, p.ContentLength)
		}
		if h.Get("Content-Length") != strconv.FormatInt(written, 10) {
			t.Fatalf("Content-Length header %q, wrote %d", h.Get("Content-Length"), written)
		}
	case 304, 412, 416:
		if written != 0 || p.ContentLength != 0 || h.Get("Content-Length") != "" {
			t.Fatalf("status %d: wrote %d, plan %+v, headers %v", p.Status, written, p, h)
		}
	default:
		t.Fatalf("status %d", p.Status)
	}
	if p.Status == 200 && written != size {
		t.Fatalf("200 wrote %d of %d", written, size)
	}
}

// checkPartsCount parses a multipart body and checks it has n parts.
func checkPartsCount(t *testing.T, raw []byte, contentType string, n int) {
	t.Helper()
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(bytes.NewReader(raw), params["boundary"])
	for i := 0; ; i++ {
		part, err := mr.NextPart()
		if err == io.EOF {
			if i != n {
				t.Fatalf("%d parts, want %d", i, n)
			}
			return
		}
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
		if _, err := io.Copy(io.Discard, part); err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
	}
}

// validFieldValue reports whether v holds no control characters other than
// HTAB (RFC 9110 §5.5); callers only pass such media types.
func validFieldValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
