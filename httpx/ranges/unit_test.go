package ranges

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

func TestParseRangeDirect(t *testing.T) {
	cases := []struct {
		header   string
		size     int64
		maxParts int
		want     []ByteRange
		outcome  Outcome
	}{
		{"", 10, 16, nil, Ignore},
		{"bytes=0-1", 0, 16, nil, Ignore},
		{"bytes=0-1", -1, 16, nil, Ignore},
		{"bytes=0-0", 1, 16, []ByteRange{br(0, 1)}, Satisfiable},
		{"bytes=-1", 1, 16, []ByteRange{br(0, 1)}, Satisfiable},
		{"bytes=1-", 1, 16, nil, Unsatisfiable},
		{" bytes =0-1", 10, 16, []ByteRange{br(0, 2)}, Satisfiable},
		{"bytes=0 - 1", 10, 16, []ByteRange{br(0, 2)}, Satisfiable},
		{"bytes=0-0,1-1", 10, 1, nil, Ignore},
		{"bytes=0-0,1-1", 10, 0, nil, Ignore}, // cap below 1 counts as 1
		{"bytes=0-0", 10, 0, []ByteRange{br(0, 1)}, Satisfiable},
		{"bytes=0-0,1-1", 10, 2, []ByteRange{br(0, 1), br(1, 1)}, Satisfiable},
		{"bytes=-5,-5", 10, 2, []ByteRange{br(5, 5), br(5, 5)}, Satisfiable},
		{"bytes=0-,0-", 1 << 62, 16, nil, Ignore},
		{"bytes=-9223372036854775807,-9223372036854775807", 1<<63 - 1, 16, nil, Ignore},
		{"bytes=0-9223372036854775806", 1<<63 - 1, 16, []ByteRange{br(0, 1<<63-1)}, Satisfiable},
		{"bytes=0-1;x", 10, 16, nil, Unsatisfiable},
		{"bytes=0-1=2", 10, 16, nil, Unsatisfiable},
		{"bytes=١-٢", 10, 16, nil, Unsatisfiable}, // non-ASCII digits
	}
	for _, c := range cases {
		got, outcome := ParseRange(c.header, c.size, c.maxParts)
		if outcome != c.outcome || !slices.Equal(got, c.want) {
			t.Errorf("ParseRange(%q, %d, %d) = %v, %v; want %v, %v", c.header, c.size, c.maxParts, got, outcome, c.want, c.outcome)
		}
	}
}

func TestContentRangeStrings(t *testing.T) {
	if got := br(0, 1).ContentRange(1); got != "bytes 0-0/1" {
		t.Errorf("got %q", got)
	}
	if got := br(100, 50).ContentRange(102400); got != "bytes 100-149/102400" {
		t.Errorf("got %q", got)
	}
	if got := UnsatisfiedContentRange(7); got != "bytes */7" {
		t.Errorf("got %q", got)
	}
	if got := br(3, 4).End(); got != 6 {
		t.Errorf("End = %d", got)
	}
	for o, want := range map[Outcome]string{Ignore: "ignore", Satisfiable: "satisfiable", Unsatisfiable: "unsatisfiable", 9: "Outcome(9)"} {
		if o.String() != want {
			t.Errorf("%d.String() = %q", int(o), o.String())
		}
	}
}

func TestConditionalsDirect(t *testing.T) {
	cases := []struct {
		method, im, inm string
		etag            string
		want            int
	}{
		{"GET", "", "", testETag, 0},
		{"GET", "*", "", testETag, 0},
		{"GET", ` "x" ,, "b3:x" `, "", testETag, 0},
		{"GET", `"b3:x"garbage`, "", testETag, 412},
		{"GET", `"b3:x`, "", testETag, 412},
		{"GET", `W/"b3:x"`, "", `W/"b3:x"`, 412}, // weak never strongly matches
		{"GET", "", `W/"b3:x"`, `W/"b3:x"`, 304},
		{"GET", "", `"b3:x"`, `W/"b3:x"`, 304},
		{"GET", "", `"a", *`, testETag, 304},
		{"GET", "", `*x`, testETag, 0},
		{"GET", "", `"a" "b3:x"`, testETag, 0}, // missing comma: malformed list
		{"GET", "", `"a\"`, testETag, 0},
		{"PUT", "", `"b3:x"`, testETag, 412},
		{"DELETE", `"nope"`, "", testETag, 412},
		{"GET", "", `"b3:x"`, "", 0},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, "/", nil)
		if c.im != "" {
			r.Header.Set("If-Match", c.im)
		}
		if c.inm != "" {
			r.Header.Set("If-None-Match", c.inm)
		}
		if got := CheckPreconditions(r, c.etag); got != c.want {
			t.Errorf("%s If-Match %q If-None-Match %q etag %q: %d, want %d", c.method, c.im, c.inm, c.etag, got, c.want)
		}
	}
	// Empty fields count as absent.
	r := httptest.NewRequest("GET", "/", nil)
	r.Header["If-Match"] = []string{""}
	r.Header["If-None-Match"] = []string{" "}
	if got := CheckPreconditions(r, testETag); got != 0 {
		t.Errorf("empty fields: %d", got)
	}
}

func TestIfRangeAllowsDirect(t *testing.T) {
	cases := []struct {
		vals []string
		etag string
		want bool
	}{
		{nil, testETag, true},
		{[]string{""}, testETag, true},
		{[]string{`"b3:x"`}, testETag, true},
		{[]string{` "b3:x" `}, testETag, true},
		{[]string{`W/"b3:x"`}, testETag, false},
		{[]string{`"b3:x"`}, `W/"b3:x"`, false},
		{[]string{`W/"b3:x"`}, `W/"b3:x"`, false},
		{[]string{`"other"`}, testETag, false},
		{[]string{`"b3:x", "b3:x"`}, testETag, false},
		{[]string{`"b3:x"`, `"b3:x"`}, testETag, false},
		{[]string{"Sun, 06 Nov 1994 08:49:37 GMT"}, testETag, false},
		{[]string{`b3:x`}, testETag, false},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		if c.vals != nil {
			r.Header["If-Range"] = c.vals
		}
		if got := IfRangeAllows(r, c.etag); got != c.want {
			t.Errorf("If-Range %q etag %q: %v, want %v", c.vals, c.etag, got, c.want)
		}
	}
}

// TestMultipartFramingExact pins the exact bytes of a multipart body.
func TestMultipartFramingExact(t *testing.T) {
	p := Plan{Status: 206, Ranges: []ByteRange{br(3, 2), br(0, 1)}, Boundary: "B"}
	var buf strings.Builder
	err := p.WriteBody(&buf, 10, "text/plain", sliceReader([]byte("0123456789")))
	if err != nil {
		t.Fatal(err)
	}
	want := "\r\n--B\r\nContent-Type: text/plain\r\nContent-Range: bytes 3-4/10\r\n\r\n34" +
		"\r\n--B\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-0/10\r\n\r\n0" +
		"\r\n--B--\r\n"
	if buf.String() != want {
		t.Fatalf("body %q\nwant %q", buf.String(), want)
	}
}

// TestMultipartNoContentType checks the framing without a part Content-Type.
func TestMultipartNoContentType(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Range", "bytes=0-0,-1")
	p := NewPlan(r, 10, testETag, "", 16)
	var buf strings.Builder
	if err := p.WriteBody(&buf, 10, "", sliceReader([]byte("0123456789"))); err != nil {
		t.Fatal(err)
	}
	if int64(buf.Len()) != p.ContentLength || strings.Contains(buf.String(), "Content-Type") {
		t.Fatalf("len %d vs %d, body %q", buf.Len(), p.ContentLength, buf.String())
	}
	h := http.Header{}
	p.SetHeaders(h, 10, "")
	if !strings.HasPrefix(h.Get("Content-Type"), "multipart/byteranges; boundary=") {
		t.Fatalf("Content-Type %q", h.Get("Content-Type"))
	}
}

func TestBoundaryRandom(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		b := newBoundary()
		if len(b) != 30 || strings.Trim(b, "0123456789abcdef") != "" || seen[b] {
			t.Fatalf("bad or repeated boundary %q", b)
		}
		seen[b] = true
	}
}

// errWriter fails after n bytes.
type errWriter struct{ n int }

var errBoom = errors.New("boom")

func (w *errWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errBoom
	}
	w.n -= len(p)
	return len(p), nil
}

func TestWriteBodyErrors(t *testing.T) {
	body := []byte("0123456789")
	multi := Plan{Status: 206, Ranges: []ByteRange{br(0, 2), br(5, 2)}, Boundary: "B"}
	// A writer failing anywhere in the multipart framing surfaces its error.
	for n := range 80 {
		err := multi.WriteBody(&errWriter{n: n}, 10, testCT, sliceReader(body))
		var buf strings.Builder
		_ = multi.WriteBody(&buf, 10, testCT, sliceReader(body))
		if n < buf.Len() && !errors.Is(err, errBoom) {
			t.Fatalf("writer failing after %d: %v", n, err)
		}
		if n >= buf.Len() && err != nil {
			t.Fatalf("writer with room %d: %v", n, err)
		}
	}
	// The first read error is returned and nothing after it is written.
	calls := 0
	failing := func(w io.Writer, off, n int64) error { calls++; return errBoom }
	for _, p := range []Plan{multi, {Status: 200, ContentLength: 10}, {Status: 206, Ranges: []ByteRange{br(1, 1)}}} {
		calls = 0
		var buf strings.Builder
		if err := p.WriteBody(&buf, 10, testCT, failing); !errors.Is(err, errBoom) || calls != 1 {
			t.Fatalf("plan %+v: err %v after %d calls", p, err, calls)
		}
	}
	// Other statuses and empty 200s write nothing and never read.
	for _, p := range []Plan{{Status: 304}, {Status: 412}, {Status: 416}, {Status: 200}} {
		var buf strings.Builder
		if err := p.WriteBody(&buf, 0, testCT, failing); err != nil || buf.Len() != 0 {
			t.Fatalf("plan %+v: err %v, %d bytes", p, err, buf.Len())
		}
	}
}
