package provider

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
)

// errProtocol: the provider's answer is framed wrongly (Content-Range or
// Content-Length not those of the requested span). It counts against the
// provider's breaker.
var errProtocol = errors.New("provider: response framing does not match the request")

// octetStream is the Content-Type of bytes whose provider type is unusable.
const octetStream = "application/octet-stream"

// body is a provider's verified byte stream of chunks first..last.
type body struct {
	c     *call
	rd    *verified.Reader
	ctype string // the provider's Content-Type, or octetStream
}

// openBody requests chunks first..last of l from base: the whole object
// without Range (200 expected, whole hash checked) or the chunk-aligned
// range (206 with exactly that Content-Range). The caller closes b.c.
func (f *Fetcher) openBody(ctx context.Context, base string, id store.ID, l verified.List, first, last int) (*body, error) {
	whole := l.Covers(first, last)
	rng, status := "", http.StatusOK
	if !whole {
		rng, status = l.RangeHeader(first, last), http.StatusPartialContent
	}
	c, err := f.do(ctx, http.MethodGet, objectURL(base, id), rng)
	if err != nil {
		return nil, err
	}
	if err := checkFraming(c, l, first, last, status, whole); err != nil {
		c.close()
		return nil, err
	}
	return &body{c: c, rd: verified.NewReader(c.resp.Body, l, first, last, true),
		ctype: mediaType(c.resp.Header.Get("Content-Type"))}, nil
}

// checkFraming checks the status, Content-Range and Content-Length of a
// body answer against the span requested.
func checkFraming(c *call, l verified.List, first, last, status int, whole bool) error {
	if err := c.expect(status); err != nil {
		return err
	}
	off, n := l.Span(first, last)
	if whole {
		off, n = 0, l.Size
	}
	if !whole && c.resp.Header.Get("Content-Range") != fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, l.Size) {
		return fmt.Errorf("%w: Content-Range %q", errProtocol, c.resp.Header.Get("Content-Range"))
	}
	if c.resp.ContentLength >= 0 && c.resp.ContentLength != n {
		return fmt.Errorf("%w: Content-Length %d, want %d", errProtocol, c.resp.ContentLength, n)
	}
	return nil
}

// next returns the next verified chunk, under the per-chunk timeout.
func (b *body) next(f *Fetcher) ([]byte, error) {
	var chunk []byte
	err := b.c.read(f, func() error {
		var err error
		chunk, err = b.rd.Next()
		return err
	})
	return chunk, err
}

// mediaType returns v when it parses as a media type (and is at most 255
// bytes, storage's limit), else application/octet-stream.
func mediaType(v string) string {
	if v == "" || len(v) > 255 {
		return octetStream
	}
	if _, _, err := mime.ParseMediaType(v); err != nil {
		return octetStream
	}
	return v
}
