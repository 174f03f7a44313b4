package admission

import (
	"io"
	"net/http"

	"github.com/ronhq/ron/httpx"
)

// ErrBodyCap is the answer to a body over its cap (docs/gateway.md §3.1):
// 413 payload_too_large with details.limit "body_cap". BodyCap and CapReader
// return this very value, so errors.Is works through wrapping.
var ErrBodyCap = httpx.NewError(http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge, "request body over the size cap").
	WithDetails(map[string]any{"limit": "body_cap"})

// BodyCap returns ErrBodyCap when r declares a Content-Length above max,
// before anything is read; a body of unknown length (chunked) passes and is
// counted by CapReader as it streams. A negative max means no cap.
func BodyCap(r *http.Request, max int64) error {
	if max >= 0 && r.ContentLength > max {
		return ErrBodyCap
	}
	return nil
}

// CapReader wraps body so that it yields at most max bytes: the read that
// would pass max fails with ErrBodyCap (sticky), so a forward streaming it
// is aborted. nil and http.NoBody are returned unchanged, as is every body
// when max is negative. Close closes body.
func CapReader(body io.ReadCloser, max int64) io.ReadCloser {
	if body == nil || body == http.NoBody || max < 0 {
		return body
	}
	return &capReader{body: body, left: max}
}

type capReader struct {
	body io.ReadCloser
	left int64 // bytes still allowed
	err  error // sticky failure
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1] // one byte past the cap shows a breach
	}
	n, err := c.body.Read(p)
	if int64(n) > c.left {
		n, c.err = int(c.left), ErrBodyCap
		c.left = 0
		return n, c.err
	}
	c.left -= int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

func (c *capReader) Close() error { return c.body.Close() }
