package hygiene

import (
	"net/http"

	"github.com/ronhq/ron/httpx"
)

// Header limits of docs/gateway.md §6. The Go server's MaxHeaderBytes
// (16 KiB) refuses larger blocks only with 4 KiB of slack, so the block
// size is checked here too.
const (
	// MaxHeaderBlock is the largest request header block: every field line
	// counted as name, ": ", value and CRLF.
	MaxHeaderBlock = 16 << 10
	// MaxHeaderFields is the most header fields (values, counting each
	// repeated field line) a request may carry.
	MaxHeaderFields = 100
	// MaxHeaderValue is the longest single header value in bytes.
	MaxHeaderValue = 8 << 10
)

// CheckHeaderLimits returns a 431 *httpx.Error (code bad_request, since the
// error code list has no dedicated code) when h carries more than
// MaxHeaderFields values in total, any value longer than MaxHeaderValue
// bytes, or field lines adding up to more than MaxHeaderBlock bytes;
// otherwise nil. Repeated lines of one name count once each.
func CheckHeaderLimits(h http.Header) error {
	n, size := 0, 0
	for k, vs := range h {
		for _, v := range vs {
			if len(v) > MaxHeaderValue {
				return tooLarge("header value over %d bytes", MaxHeaderValue)
			}
			size += len(k) + len(v) + 4
		}
		n += len(vs)
	}
	if n > MaxHeaderFields {
		return tooLarge("more than %d header fields", MaxHeaderFields)
	}
	if size > MaxHeaderBlock {
		return tooLarge("header block over %d bytes", MaxHeaderBlock)
	}
	return nil
}

func tooLarge(format string, n int) error {
	return httpx.NewError(http.StatusRequestHeaderFieldsTooLarge, httpx.CodeBadRequest, format, n)
}
