package ranges

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const (
	testETag = `"b3:x"`
	testCT   = "application/octet-stream"
)

// hdrs is a list of header name/value pairs, applied with Header.Add.
type hdrs []string

// planCase is one row of the Range/conditional matrix (docs/storage.md §4, §10;
// docs/edge.md §2).
type planCase struct {
	name     string
	method   string // "" = GET
	empty    bool   // representation of 0 bytes instead of 100
	size     int64  // 0 = 100
	maxParts int    // 0 = 16
	h        hdrs
	status   int
	ranges   []ByteRange
}

// rangeList builds "bytes=0-0,2-2,..." with n single-byte ranges.
func rangeList(n int) string {
	specs := make([]string, n)
	for i := range specs {
		specs[i] = fmt.Sprintf("%d-%d", 2*i, 2*i)
	}
	return "bytes=" + strings.Join(specs, ",")
}

// singleBytes returns n one-byte ranges at 0, 2, 4, ...
func singleBytes(n int) []ByteRange {
	out := make([]ByteRange, n)
	for i := range out {
		out[i] = ByteRange{Start: int64(2 * i), Length: 1}
	}
	return out
}

func br(start, length int64) ByteRange { return ByteRange{Start: start, Length: length} }

var planCases = []planCase{
	// Plain and single ranges.
	{name: "no range", status: 200},
	{name: "single", h: hdrs{"Range", "bytes=0-9"}, status: 206, ranges: []ByteRange{br(0, 10)}},
	{name: "single last byte", h: hdrs{"Range", "bytes=99-99"}, status: 206, ranges: []ByteRange{br(99, 1)}},
	{name: "end clipped", h: hdrs{"Range", "bytes=90-200"}, status: 206, ranges: []ByteRange{br(90, 10)}},
	{name: "open", h: hdrs{"Range", "bytes=50-"}, status: 206, ranges: []ByteRange{br(50, 50)}},
	{name: "open from 0 is whole", h: hdrs{"Range", "bytes=0-"}, status: 206, ranges: []ByteRange{br(0, 100)}},
	{name: "suffix", h: hdrs{"Range", "bytes=-10"}, status: 206, ranges: []ByteRange{br(90, 10)}},
	{name: "suffix larger than size clips to whole", h: hdrs{"Range", "bytes=-500"}, status: 206, ranges: []ByteRange{br(0, 100)}},
	{name: "suffix max int64", h: hdrs{"Range", "bytes=-9223372036854775807"}, status: 206, ranges: []ByteRange{br(0, 100)}},
	// Multiple ranges.
	{name: "multi", h: hdrs{"Range", "bytes=0-1,3-4"}, status: 206, ranges: []ByteRange{br(0, 2), br(3, 2)}},
	{name: "multi request order", h: hdrs{"Range", "bytes=50-59,0-9,-5"}, status: 206, ranges: []ByteRange{br(50, 10), br(0, 10), br(95, 5)}},
	{name: "multi unsatisfiable dropped", h: hdrs{"Range", "bytes=0-1,100-,-0"}, status: 206, ranges: []ByteRange{br(0, 2)}},
	{name: "multi summing exactly N", h: hdrs{"Range", "bytes=0-49,50-99"}, status: 206, ranges: []ByteRange{br(0, 50), br(50, 50)}},
	// Malformed and unsatisfiable.
	{name: "a>b", h: hdrs{"Range", "bytes=5-2"}, status: 416},
	{name: "non-digit start", h: hdrs{"Range", "bytes=x-"}, status: 416},
	{name: "empty set", h: hdrs{"Range", "bytes="}, status: 416},
	{name: "only commas", h: hdrs{"Range", "bytes= , ,"}, status: 416},
	{name: "start = size", h: hdrs{"Range", "bytes=100-"}, status: 416},
	{name: "start past size", h: hdrs{"Range", "bytes=1000-2000"}, status: 416},
	{name: "suffix zero", h: hdrs{"Range", "bytes=-0"}, status: 416},
	{name: "none satisfiable", h: hdrs{"Range", "bytes=-0,100-,200-300"}, status: 416},
	{name: "a>b among valid", h: hdrs{"Range", "bytes=0-1,5-2"}, status: 416},
	{name: "garbage after bytes=", h: hdrs{"Range", "bytes=abc"}, status: 416},
	{name: "no dash", h: hdrs{"Range", "bytes=1"}, status: 416},
	{name: "two dashes", h: hdrs{"Range", "bytes=0-1-2"}, status: 416},
	{name: "bare dash", h: hdrs{"Range", "bytes=-"}, status: 416},
	{name: "negative suffix", h: hdrs{"Range", "bytes=--1"}, status: 416},
	{name: "plus sign", h: hdrs{"Range", "bytes=+1-2"}, status: 416},
	{name: "hex digits", h: hdrs{"Range", "bytes=0x1-2"}, status: 416},
	{name: "bytes without =", h: hdrs{"Range", "bytes"}, status: 416},
	{name: "overflow start", h: hdrs{"Range", "bytes=99999999999999999999-"}, status: 416},
	{name: "overflow end", h: hdrs{"Range", "bytes=0-99999999999999999999"}, status: 416},
	{name: "overflow suffix", h: hdrs{"Range", "bytes=-99999999999999999999"}, status: 416},
	{name: "huge digits", h: hdrs{"Range", "bytes=" + strings.Repeat("9", 400) + "-" + strings.Repeat("9", 400)}, status: 416},
	{name: "max int64 start", h: hdrs{"Range", "bytes=9223372036854775807-"}, status: 416},
	// Ignored Range.
	{name: "empty object single", empty: true, h: hdrs{"Range", "bytes=0-1"}, status: 200},
	{name: "empty object suffix", empty: true, h: hdrs{"Range", "bytes=-5"}, status: 200},
	{name: "empty object malformed", empty: true, h: hdrs{"Range", "bytes=x-"}, status: 200},
	{name: "empty object -0", empty: true, h: hdrs{"Range", "bytes=-0"}, status: 200},
	{name: "HEAD single", method: "HEAD", h: hdrs{"Range", "bytes=0-1"}, status: 200},
	{name: "HEAD multi", method: "HEAD", h: hdrs{"Range", "bytes=0-1,3-4"}, status: 200},
	{name: "HEAD malformed", method: "HEAD", h: hdrs{"Range", "bytes=5-2"}, status: 200},
	{name: "HEAD unsatisfiable", method: "HEAD", h: hdrs{"Range", "bytes=100-"}, status: 200},
	{name: "HEAD If-Range ignored", method: "HEAD", h: hdrs{"Range", "bytes=0-1", "If-Range", `"other"`}, status: 200},
	{name: "POST Range ignored", method: "POST", h: hdrs{"Range", "bytes=0-1"}, status: 200},
	{name: "other unit", h: hdrs{"Range", "items=0-1"}, status: 200},
	{name: "garbage unit without =", h: hdrs{"Range", "foo"}, status: 200},
	{name: "17 ranges cap 16", h: hdrs{"Range", rangeList(17)}, status: 200},
	{name: "17 ranges one malformed cap 16", h: hdrs{"Range", rangeList(16) + ",x-"}, status: 200},
	{name: "16 ranges cap 16", h: hdrs{"Range", rangeList(16)}, status: 206, ranges: singleBytes(16)},
	{name: "129 ranges cap 128", size: 300, maxParts: 128, h: hdrs{"Range", rangeList(129)}, status: 200},
	{name: "128 ranges cap 128", size: 300, maxParts: 128, h: hdrs{"Range", rangeList(128)}, status: 206, ranges: singleBytes(128)},
	{name: "total past N", h: hdrs{"Range", "bytes=0-99,0-0"}, status: 200},
	{name: "overlap past N", h: hdrs{"Range", "bytes=0-60,40-99"}, status: 200},
	{name: "suffixes past N", h: hdrs{"Range", "bytes=-60,-60"}, status: 200},
	// Case and whitespace.
	{name: "uppercase unit", h: hdrs{"Range", "BYTES=0-1"}, status: 206, ranges: []ByteRange{br(0, 2)}},
	{name: "mixed case unit", h: hdrs{"Range", "Bytes=3-4"}, status: 206, ranges: []ByteRange{br(3, 2)}},
	{name: "whitespace around commas and specs", h: hdrs{"Range", "bytes= 0-1 , 3-4"}, status: 206, ranges: []ByteRange{br(0, 2), br(3, 2)}},
	{name: "tabs and trailing comma", h: hdrs{"Range", "bytes=0-1,\t3-4\t,"}, status: 206, ranges: []ByteRange{br(0, 2), br(3, 2)}},
	{name: "empty list element", h: hdrs{"Range", "bytes=0-1,,3-4"}, status: 206, ranges: []ByteRange{br(0, 2), br(3, 2)}},
	// If-None-Match.
	{name: "INM strong", h: hdrs{"If-None-Match", `"b3:x"`}, status: 304},
	{name: "INM weak", h: hdrs{"If-None-Match", `W/"b3:x"`}, status: 304},
	{name: "INM star", h: hdrs{"If-None-Match", `*`}, status: 304},
	{name: "INM list", h: hdrs{"If-None-Match", `"a", "b3:x"`}, status: 304},
	{name: "INM list weak", h: hdrs{"If-None-Match", `"a",W/"b3:x"`}, status: 304},
	{name: "INM two lines", h: hdrs{"If-None-Match", `"a"`, "If-None-Match", `"b3:x"`}, status: 304},
	{name: "INM other", h: hdrs{"If-None-Match", `"a", "b"`}, status: 200},
	{name: "INM unquoted", h: hdrs{"If-None-Match", `b3:x`}, status: 200},
	{name: "INM beats Range", h: hdrs{"If-None-Match", `"b3:x"`, "Range", "bytes=0-1"}, status: 304},
	{name: "INM beats bad Range", h: hdrs{"If-None-Match", `"b3:x"`, "Range", "bytes=5-2"}, status: 304},
	{name: "INM HEAD", method: "HEAD", h: hdrs{"If-None-Match", `"b3:x"`}, status: 304},
	{name: "INM POST", method: "POST", h: hdrs{"If-None-Match", `*`}, status: 412},
	{name: "INM miss keeps Range", h: hdrs{"If-None-Match", `"a"`, "Range", "bytes=0-1"}, status: 206, ranges: []ByteRange{br(0, 2)}},
	// If-Match.
	{name: "IM other", h: hdrs{"If-Match", `"other"`}, status: 412},
	{name: "IM star", h: hdrs{"If-Match", `*`}, status: 200},
	{name: "IM star with Range", h: hdrs{"If-Match", `*`, "Range", "bytes=0-1"}, status: 206, ranges: []ByteRange{br(0, 2)}},
	{name: "IM strong equal", h: hdrs{"If-Match", `"b3:x"`}, status: 200},
	{name: "IM weak fails strong comparison", h: hdrs{"If-Match", `W/"b3:x"`}, status: 412},
	{name: "IM list", h: hdrs{"If-Match", `"a", "b3:x"`}, status: 200},
	{name: "IM unquoted", h: hdrs{"If-Match", `b3:x`}, status: 412},
	{name: "IM HEAD", method: "HEAD", h: hdrs{"If-Match", `"other"`}, status: 412},
	{name: "IM beats INM", h: hdrs{"If-Match", `"other"`, "If-None-Match", `"b3:x"`}, status: 412},
	{name: "IM pass then INM", h: hdrs{"If-Match", `"b3:x"`, "If-None-Match", `"b3:x"`}, status: 304},
	{name: "IM beats bad Range", h: hdrs{"If-Match", `"other"`, "Range", "bytes=5-2"}, status: 412},
	// If-Range.
	{name: "IR strong equal", h: hdrs{"If-Range", `"b3:x"`, "Range", "bytes=0-9"}, status: 206, ranges: []ByteRange{br(0, 10)}},
	{name: "IR weak", h: hdrs{"If-Range", `W/"b3:x"`, "Range", "bytes=0-9"}, status: 200},
	{name: "IR other", h: hdrs{"If-Range", `"other"`, "Range", "bytes=0-9"}, status: 200},
	{name: "IR date", h: hdrs{"If-Range", "Sun, 06 Nov 1994 08:49:37 GMT", "Range", "bytes=0-9"}, status: 200},
	{name: "IR other with bad Range", h: hdrs{"If-Range", `"other"`, "Range", "bytes=5-2"}, status: 200},
	{name: "IR equal with bad Range", h: hdrs{"If-Range", `"b3:x"`, "Range", "bytes=5-2"}, status: 416},
	{name: "IR without Range", h: hdrs{"If-Range", `"other"`}, status: 200},
	// Date conditionals are ignored.
	{name: "IUS ignored", h: hdrs{"If-Unmodified-Since", "Sun, 06 Nov 1994 08:49:37 GMT"}, status: 200},
	{name: "IMS ignored", h: hdrs{"If-Modified-Since", "Fri, 01 Jan 2100 00:00:00 GMT"}, status: 200},
}

func (c planCase) request() (*http.Request, int64, int) {
	method := c.method
	if method == "" {
		method = http.MethodGet
	}
	r := httptest.NewRequest(method, "/o/x", nil)
	for i := 0; i+1 < len(c.h); i += 2 {
		r.Header.Add(c.h[i], c.h[i+1])
	}
	size := int64(100)
	switch {
	case c.empty:
		size = 0
	case c.size != 0:
		size = c.size
	}
	maxParts := c.maxParts
	if maxParts == 0 {
		maxParts = 16
	}
	return r, size, maxParts
}

func TestPlanMatrix(t *testing.T) {
	for _, c := range planCases {
		t.Run(c.name, func(t *testing.T) {
			r, size, maxParts := c.request()
			p := NewPlan(r, size, testETag, testCT, maxParts)
			if p.Status != c.status {
				t.Fatalf("status = %d, want %d (plan %+v)", p.Status, c.status, p)
			}
			if !slices.Equal(p.Ranges, c.ranges) {
				t.Fatalf("ranges = %v, want %v", p.Ranges, c.ranges)
			}
			h := http.Header{}
			p.SetHeaders(h, size, testCT)
			checkHeaders(t, p, h, size)
			checkBody(t, p, size)
		})
	}
}

// checkHeaders asserts the framing headers SetHeaders must (and must not) set.
func checkHeaders(t *testing.T, p Plan, h http.Header, size int64) {
	t.Helper()
	want := http.Header{}
	switch {
	case p.Status == 200:
		want.Set("Content-Length", strconv.FormatInt(size, 10))
		want.Set("Content-Type", testCT)
	case p.Status == 206 && len(p.Ranges) == 1:
		want.Set("Content-Length", strconv.FormatInt(p.Ranges[0].Length, 10))
		want.Set("Content-Range", p.Ranges[0].ContentRange(size))
		want.Set("Content-Type", testCT)
	case p.Status == 206:
		if len(p.Boundary) != 30 || strings.Trim(p.Boundary, "0123456789abcdef") != "" {
			t.Fatalf("boundary %q is not 30 lowercase hex chars", p.Boundary)
		}
		want.Set("Content-Length", strconv.FormatInt(p.ContentLength, 10))
		want.Set("Content-Type", "multipart/byteranges; boundary="+p.Boundary)
	case p.Status == 416:
		want.Set("Content-Range", fmt.Sprintf("bytes */%d", size))
	}
	if fmt.Sprint(h) != fmt.Sprint(want) {
		t.Fatalf("headers = %v, want %v", h, want)
	}
	if p.Status == 206 && len(p.Ranges) == 1 {
		r := p.Ranges[0]
		if got, w := h.Get("Content-Range"), fmt.Sprintf("bytes %d-%d/%d", r.Start, r.Start+r.Length-1, size); got != w {
			t.Fatalf("Content-Range = %q, want %q", got, w)
		}
	}
}

// testBody returns size deterministic bytes.
func testBody(size int64) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

// sliceReader returns a WriteBody read function serving body.
func sliceReader(body []byte) func(w io.Writer, off, n int64) error {
	return func(w io.Writer, off, n int64) error {
		if n <= 0 || off < 0 || off+n > int64(len(body)) {
			return fmt.Errorf("bad read(%d, %d) of %d bytes", off, n, len(body))
		}
		_, err := w.Write(body[off : off+n])
		return err
	}
}

// checkBody writes the plan's body and checks its length and content.
func checkBody(t *testing.T, p Plan, size int64) {
	t.Helper()
	body := testBody(size)
	var buf bytes.Buffer
	if err := p.WriteBody(&buf, size, testCT, sliceReader(body)); err != nil {
		t.Fatalf("WriteBody: %v", err)
	}
	if int64(buf.Len()) != p.ContentLength {
		t.Fatalf("wrote %d bytes, ContentLength %d", buf.Len(), p.ContentLength)
	}
	switch {
	case p.Status == 200:
		if !bytes.Equal(buf.Bytes(), body) {
			t.Fatal("200 body differs")
		}
	case p.Status == 206 && len(p.Ranges) == 1:
		r := p.Ranges[0]
		if !bytes.Equal(buf.Bytes(), body[r.Start:r.Start+r.Length]) {
			t.Fatal("206 body differs")
		}
	case p.Status == 206:
		checkMultipart(t, buf.Bytes(), MultipartContentType(p.Boundary), p.Ranges, body)
	default:
		if buf.Len() != 0 {
			t.Fatalf("status %d wrote %d bytes", p.Status, buf.Len())
		}
	}
}

// checkMultipart parses a multipart/byteranges body with mime/multipart and
// checks every part against want and body.
func checkMultipart(t *testing.T, raw []byte, contentType string, want []ByteRange, body []byte) {
	t.Helper()
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/byteranges" {
		t.Fatalf("content type %q: %v", contentType, err)
	}
	mr := multipart.NewReader(bytes.NewReader(raw), params["boundary"])
	size := int64(len(body))
	for i, r := range want {
		part, err := mr.NextPart()
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
		if got := part.Header.Get("Content-Type"); got != testCT {
			t.Fatalf("part %d Content-Type %q", i, got)
		}
		if got, w := part.Header.Get("Content-Range"), r.ContentRange(size); got != w {
			t.Fatalf("part %d Content-Range %q, want %q", i, got, w)
		}
		data, err := io.ReadAll(part)
		if err != nil {
			t.Fatalf("part %d read: %v", i, err)
		}
		if !bytes.Equal(data, body[r.Start:r.Start+r.Length]) {
			t.Fatalf("part %d data differs", i)
		}
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Fatalf("after last part: %v, want EOF", err)
	}
}
