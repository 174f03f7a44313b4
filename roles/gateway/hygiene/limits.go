package hygiene

import (
	"net/http"

	"github.com/ronhq/ron/httpx"
)

// Header limits of spec/gateway.md §6 (the 16 KiB block limit is the Go
// server's MaxHeaderBytes and is not checked here).
const (
	// MaxHeaderFields is the most header fields (values, counting each
	// repeated field line) a request may carry.
	MaxHeaderFields = 100
	// MaxHeaderValue is the longest single header value in bytes.
	MaxHeaderValue = 8 << 10
)

// CheckHeaderLimits returns a 431 *httpx.Error (code bad_request, since the
// error code list has no dedicated code) when h carries more than
// MaxHeaderFields values in total or any value longer than MaxHeaderValue
// bytes; otherwise nil. Repeated lines of one name count once each.
func CheckHeaderLimits(h http.Header) error {
	n := 0
	for _, vs := range h {
		for _, v := range vs {
			if len(v) > MaxHeaderValue {
				return tooLarge("header value over %d bytes", MaxHeaderValue)
			}
		}
		n += len(vs)
	}
	if n > MaxHeaderFields {
		return tooLarge("more than %d header fields", MaxHeaderFields)
	}
	return nil
}

func tooLarge(format string, n int) error {
	return httpx.NewError(http.StatusRequestHeaderFieldsTooLarge, httpx.CodeBadRequest, format, n)
}
