package registryapi

import (
	"net/http"

	"github.com/ronhq/ron/httpx"
)

// errMalformed is 400 malformed with details.reason.
func errMalformed(reason, format string, args ...any) *httpx.Error {
	return httpx.NewError(http.StatusBadRequest, httpx.CodeMalformed, format, args...).
		WithDetails(map[string]any{"reason": reason})
}

// errCorrupt is 500 corrupt: stored bytes failed a check.
func errCorrupt(format string, args ...any) *httpx.Error {
	return httpx.NewError(http.StatusInternalServerError, httpx.CodeCorrupt, format, args...)
}
