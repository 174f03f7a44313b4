package httpcache

import (
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the reference instant of the tests (a whole second).
var t0 = time.Date(2025, time.March, 14, 12, 0, 0, 0, time.UTC)

// at returns t0 shifted by s seconds.
func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// httpDate returns the IMF-fixdate of t0 shifted by s seconds.
func httpDate(s float64) string { return FormatHTTPDate(at(s)) }

// hdr builds a header from name, value pairs; repeated names add lines.
func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// getReq is a GET request with header h received at t0.
func getReq(h http.Header) Request {
	if h == nil {
		h = http.Header{}
	}
	return Request{Method: http.MethodGet, Header: h, Time: t0}
}

// resp is a response with status and header received at t0 (sent at t0).
func resp(status int, h http.Header) Response {
	return Response{Status: status, Header: h, ContentLength: -1, RequestTime: t0, ResponseTime: t0}
}

// stored stores a 200 with header h, exchanged at t0, for a plain GET.
func stored(h http.Header) *Stored { return NewStored(getReq(nil), resp(200, h)) }
