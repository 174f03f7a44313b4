package vfetch

import (
	"context"
	"fmt"
	"net/http"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
)

// ChunkReader yields verified chunks, then io.EOF: *verified.Reader and
// *WholeReader.
type ChunkReader interface {
	Next() ([]byte, error)
}

// Body is a source's verified byte stream. It is not safe for concurrent
// use; the caller closes it.
type Body struct {
	// ContentType is the source's Content-Type as MediaType accepts it.
	ContentType string
	// Status is the source's status: 200 (whole) or 206 (a range).
	Status int

	c  *Call
	rd ChunkReader
}

// Next returns the next verified chunk, read in one phase of at most
// Timeout; io.EOF after the last. The slice is valid until the next call.
func (b *Body) Next() ([]byte, error) {
	var chunk []byte
	err := b.c.Read(func() error {
		var err error
		chunk, err = b.rd.Next()
		return err
	})
	return chunk, err
}

// Close releases the request.
func (b *Body) Close() { b.c.Close() }

// Open requests chunks first..last of l from base: the whole object
// without Range (200 expected, whole hash checked) or the chunk-aligned
// range (206 with exactly that Content-Range). A Content-Length, when
// present, must be the span's. Framing errors wrap ErrProtocol; another
// status is a *StatusError.
func (r *Requester) Open(ctx context.Context, base string, id store.ID, l verified.List, first, last int) (*Body, error) {
	whole := l.Covers(first, last)
	rng, status := "", http.StatusOK
	if !whole {
		rng, status = l.RangeHeader(first, last), http.StatusPartialContent
	}
	c, err := r.Do(ctx, http.MethodGet, ObjectURL(base, id), rng)
	if err != nil {
		return nil, err
	}
	if err := c.checkFraming(l, first, last, status, whole); err != nil {
		c.Close()
		return nil, err
	}
	return &Body{c: c, rd: verified.NewReader(c.resp.Body, l, first, last, true), Status: status,
		ContentType: c.ContentType()}, nil
}

// checkFraming checks the status, Content-Range and Content-Length of a
// body answer against the span requested.
func (c *Call) checkFraming(l verified.List, first, last, status int, whole bool) error {
	if err := c.Expect(status); err != nil {
		return err
	}
	off, n := l.Span(first, last)
	if whole {
		off, n = 0, l.Size
	}
	if !whole && c.resp.Header.Get("Content-Range") != fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, l.Size) {
		return fmt.Errorf("%w: Content-Range %q", ErrProtocol, c.resp.Header.Get("Content-Range"))
	}
	if c.resp.ContentLength >= 0 && c.resp.ContentLength != n {
		return fmt.Errorf("%w: Content-Length %d, want %d", ErrProtocol, c.resp.ContentLength, n)
	}
	return nil
}

// OpenWhole requests the whole object from a source trusted to hold it but
// asked for no chunk list (the co-located storage): GET {base}/o/{b3}, 200
// with a Content-Length expected (else ErrProtocol). The body is verified
// by WholeReader: every chunk is released as read, the last only once the
// whole hash matched. size is the Content-Length.
func (r *Requester) OpenWhole(ctx context.Context, base string, id store.ID) (b *Body, size int64, err error) {
	c, err := r.sized(ctx, http.MethodGet, base, id)
	if err != nil {
		return nil, 0, err
	}
	size = c.resp.ContentLength
	return &Body{c: c, rd: NewWholeReader(c.resp.Body, size, id), Status: http.StatusOK,
		ContentType: c.ContentType()}, size, nil
}

// Head asks base for id's size and Content-Type (as MediaType accepts it):
// HEAD {base}/o/{b3}, 200 with a Content-Length expected (else
// ErrProtocol). Nothing is verified.
func (r *Requester) Head(ctx context.Context, base string, id store.ID) (size int64, ctype string, err error) {
	c, err := r.sized(ctx, http.MethodHead, base, id)
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	return c.resp.ContentLength, c.ContentType(), nil
}

// sized sends method to the object's URL and expects 200 with a
// Content-Length. The caller closes the call.
func (r *Requester) sized(ctx context.Context, method, base string, id store.ID) (*Call, error) {
	c, err := r.Do(ctx, method, ObjectURL(base, id), "")
	if err != nil {
		return nil, err
	}
	if err := c.Expect(http.StatusOK); err != nil {
		c.Close()
		return nil, err
	}
	if c.resp.ContentLength < 0 {
		c.Close()
		return nil, fmt.Errorf("%w: %s without Content-Length", ErrProtocol, method)
	}
	return c, nil
}
