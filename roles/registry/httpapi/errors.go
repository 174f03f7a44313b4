package httpapi

import (
	"net/http"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/committer"
)

// Retry-After values of docs/registry.md §3.
const (
	retryBusy        = 1
	retryMaintenance = 30
	retryUnready     = 5
)

// Reasons of 410 gone and 400 bad_request answered here.
const (
	reasonPruned  = "pruned"
	reasonVersion = "version"
	reasonTile    = "tile_path"
	reasonBody    = "body"
)

// errGone is 410 gone with details.reason (pruned).
func errGone(reason, format string, args ...any) *httpx.Error {
	return httpx.NewError(http.StatusGone, httpx.CodeGone, format, args...).
		WithDetails(map[string]any{"reason": reason})
}

// errNotFound is 404 not_found.
func errNotFound(format string, args ...any) *httpx.Error {
	return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, format, args...)
}

// errBadRequest is 400 bad_request with details.reason.
func errBadRequest(reason, format string, args ...any) *httpx.Error {
	return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, format, args...).
		WithDetails(map[string]any{"reason": reason})
}

// errMalformed is 400 malformed with details.reason.
func errMalformed(reason, format string, args ...any) *httpx.Error {
	return httpx.NewError(http.StatusBadRequest, httpx.CodeMalformed, format, args...).
		WithDetails(map[string]any{"reason": reason})
}

// errBusy is 429 busy, Retry-After 1.
func errBusy(format string, args ...any) *httpx.Error {
	return httpx.NewError(http.StatusTooManyRequests, httpx.CodeBusy, format, args...).WithRetryAfter(retryBusy)
}

// errDraining is 503 draining, Retry-After 5.
func errDraining() *httpx.Error {
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeDraining, "registry is shutting down").
		WithRetryAfter(retryUnready)
}

// errNotReady is 503 not_ready with details.reason: Retry-After 30 for
// maintenance, 5 for every other reason.
func errNotReady(reason string) *httpx.Error {
	retry := retryUnready
	if reason == committer.ReasonMaintenance {
		retry = retryMaintenance
	}
	return httpx.NewError(http.StatusServiceUnavailable, httpx.CodeNotReady, "registry writes unavailable: %s", reason).
		WithRetryAfter(retry).WithDetails(map[string]any{"reason": reason})
}

// errCorrupt is 500 corrupt: stored bytes failed a check.
func errCorrupt(format string, args ...any) *httpx.Error {
	return httpx.NewError(http.StatusInternalServerError, httpx.CodeCorrupt, format, args...)
}

// errInternal is 500 internal.
func errInternal(format string, args ...any) *httpx.Error {
	return httpx.NewError(http.StatusInternalServerError, httpx.CodeInternal, format, args...)
}
