package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/ranges"
)

// Cache-Control values of docs/registry.md §2 and §5.
const (
	ccNoCache = "no-cache"
	ccNoStore = "no-store"
	ccKey     = "max-age=3600"
)

// Content types of the log routes.
const (
	ctText   = "text/plain; charset=utf-8"
	ctBinary = "application/octet-stream"
)

// writeJSON writes v as a JSON answer with the given Cache-Control.
func writeJSON(c echo.Context, status int, v any, cacheControl string) error {
	b, err := json.Marshal(v)
	if err != nil {
		return errInternal("encode response: %v", err)
	}
	return writeBytes(c, status, echo.MIMEApplicationJSON, append(b, '\n'), cacheControl)
}

// writeBytes writes body with its content type, length and Cache-Control;
// a HEAD request gets the same headers and no body (net/http drops it).
func writeBytes(c echo.Context, status int, contentType string, body []byte, cacheControl string) error {
	hd := c.Response().Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	if cacheControl != "" {
		hd.Set("Cache-Control", cacheControl)
	}
	return c.Blob(status, contentType, body)
}

// conditional sets ETag and Cache-Control and reports whether the request's
// preconditions already answered it: 304 Not Modified (written here) or a
// failed If-Match (412 precondition_failed, returned).
func conditional(c echo.Context, etag, cacheControl string) (bool, error) {
	hd := c.Response().Header()
	hd.Set("ETag", etag)
	hd.Set("Cache-Control", cacheControl)
	switch ranges.CheckPreconditions(c.Request(), etag) {
	case http.StatusNotModified:
		return true, c.NoContent(http.StatusNotModified)
	case http.StatusPreconditionFailed:
		return true, httpx.NewError(http.StatusPreconditionFailed, httpx.CodePreconditionFailed, "If-Match failed")
	}
	return false, nil
}

// location sets the Location header.
func location(c echo.Context, path string) {
	c.Response().Header().Set("Location", path)
}

// isHead reports whether c is a HEAD request.
func isHead(c echo.Context) bool { return c.Request().Method == http.MethodHead }
