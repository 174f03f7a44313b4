package ranges

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/iox"
)

const objectSize = 102400

// objectHandler serves body the way a role does: NewPlan, caller headers,
// SetHeaders, WriteBody. It reports the bytes written per request on written.
func objectHandler(t *testing.T, body []byte, written chan<- int64) http.Handler {
	size := int64(len(body))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := NewPlan(r, size, testETag, testCT, 16)
		h := w.Header()
		h.Set("ETag", testETag)
		h.Set("Accept-Ranges", "bytes")
		p.SetHeaders(h, size, testCT)
		w.WriteHeader(p.Status)
		cw := &iox.CountingWriter{W: w}
		if r.Method == http.MethodGet {
			if err := p.WriteBody(cw, size, testCT, sliceReader(body)); err != nil {
				t.Errorf("WriteBody: %v", err)
			}
		}
		if cw.N != p.ContentLength && r.Method == http.MethodGet && (p.Status == 200 || p.Status == 206) {
			t.Errorf("wrote %d bytes, Content-Length %d", cw.N, p.ContentLength)
		}
		written <- cw.N
	})
}

func TestServeOverHTTP(t *testing.T) {
	body := testBody(objectSize)
	written := make(chan int64, 1)
	srv := httptest.NewServer(objectHandler(t, body, written))
	defer srv.Close()

	cases := []struct {
		name, method, rng string
		status            int
		ranges            []ByteRange
	}{
		{"full", "GET", "", 200, nil},
		{"single", "GET", "bytes=65536-70000", 206, []ByteRange{br(65536, 4465)}},
		{"chunk aligned tail", "GET", "bytes=65536-102399", 206, []ByteRange{br(65536, 36864)}},
		{"suffix", "GET", "bytes=-100", 206, []ByteRange{br(102300, 100)}},
		{"multi", "GET", "bytes=0-99, 102000-, 500-1499,-1", 206, []ByteRange{br(0, 100), br(102000, 400), br(500, 1000), br(102399, 1)}},
		{"unsatisfiable", "GET", "bytes=102400-", 416, nil},
		{"head", "HEAD", "bytes=0-1", 200, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, srv.URL+"/o/x", nil)
			if c.rng != "" {
				req.Header.Set("Range", c.rng)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			n := <-written
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			checkHTTPResponse(t, resp, got, n, c.ranges, body)
		})
	}
}

// checkHTTPResponse checks a served response's length and bytes.
func checkHTTPResponse(t *testing.T, resp *http.Response, got []byte, written int64, ranges []ByteRange, body []byte) {
	t.Helper()
	if resp.Request.Method == http.MethodHead {
		if len(got) != 0 || resp.ContentLength != objectSize {
			t.Fatalf("HEAD: %d body bytes, Content-Length %d", len(got), resp.ContentLength)
		}
		return
	}
	if int64(len(got)) != written {
		t.Fatalf("client read %d bytes, handler wrote %d", len(got), written)
	}
	if resp.StatusCode != 416 && resp.ContentLength != written {
		t.Fatalf("Content-Length %d, written %d", resp.ContentLength, written)
	}
	switch {
	case resp.StatusCode == 416:
		if cr := resp.Header.Get("Content-Range"); cr != "bytes */102400" {
			t.Fatalf("Content-Range %q", cr)
		}
	case resp.StatusCode == 200:
		if !bytes.Equal(got, body) {
			t.Fatal("200 body differs")
		}
	case len(ranges) == 1:
		r := ranges[0]
		if !bytes.Equal(got, body[r.Start:r.Start+r.Length]) {
			t.Fatal("206 body differs")
		}
		if cr := resp.Header.Get("Content-Range"); cr != r.ContentRange(objectSize) {
			t.Fatalf("Content-Range %q", cr)
		}
	default:
		checkMultipart(t, got, resp.Header.Get("Content-Type"), ranges, body)
	}
}

// TestAgreesWithServeContent diffs status, Content-Range and body against
// net/http.ServeContent on the cases where docs/storage.md §4 does not
// deliberately differ from it (another unit or an uppercase unit, `bytes=`, an
// empty body, HEAD, more ranges than the cap, a>b after an unsatisfiable
// start). ServeContent omits Content-Range on a malformed-range 416, where we
// always send "bytes */N", so Content-Range is compared on 206 only.
func TestAgreesWithServeContent(t *testing.T) {
	body := testBody(1000)
	ranges := []string{"", "bytes=0-0", "bytes=0-", "bytes=-1", "bytes=-5000", "bytes=500-400", "bytes=1000-",
		"bytes=abc", "bytes=0-1,5-9", "bytes=0-999,0-0", "bytes= 1-2 , 4-5", "bytes=99999999999999999999-"}
	conds := [][2]string{{}, {"If-None-Match", `W/"b3:x"`}, {"If-Match", `"other"`}, {"If-Match", `*`},
		{"If-Range", `"b3:x"`}, {"If-Range", `W/"b3:x"`}, {"If-Range", `"other"`}}
	for _, rng := range ranges {
		for _, cond := range conds {
			mine, theirs := serveBoth(t, body, rng, cond)
			sameCR := mine.Code != 206 || mine.Header().Get("Content-Range") == theirs.Header().Get("Content-Range")
			if mine.Code != theirs.Code || !sameCR {
				t.Errorf("Range %q %v: ours %d %q, ServeContent %d %q", rng, cond, mine.Code,
					mine.Header().Get("Content-Range"), theirs.Code, theirs.Header().Get("Content-Range"))
				continue
			}
			if ct := mine.Header().Get("Content-Type"); mine.Code == 206 && strings.HasPrefix(ct, "multipart/") {
				continue // boundaries differ; parts are checked by TestPlanMatrix
			}
			if mine.Code < 300 && !bytes.Equal(mine.Body.Bytes(), theirs.Body.Bytes()) {
				t.Errorf("Range %q %v: bodies differ", rng, cond)
			}
		}
	}
}

// serveBoth answers one request with our helpers and with http.ServeContent.
func serveBoth(t *testing.T, body []byte, rng string, cond [2]string) (mine, theirs *httptest.ResponseRecorder) {
	newReq := func() *http.Request {
		r := httptest.NewRequest("GET", "/o/x", nil)
		if rng != "" {
			r.Header.Set("Range", rng)
		}
		if cond[0] != "" {
			r.Header.Set(cond[0], cond[1])
		}
		return r
	}
	size := int64(len(body))
	mine = httptest.NewRecorder()
	p := NewPlan(newReq(), size, testETag, testCT, 16)
	p.SetHeaders(mine.Header(), size, testCT)
	mine.WriteHeader(p.Status)
	if err := p.WriteBody(mine, size, testCT, sliceReader(body)); err != nil {
		t.Fatal(err)
	}
	theirs = httptest.NewRecorder()
	theirs.Header().Set("ETag", testETag)
	theirs.Header().Set("Content-Type", testCT)
	http.ServeContent(theirs, newReq(), "", time.Time{}, bytes.NewReader(body))
	return mine, theirs
}
