package vfetch

import (
	"context"
	"fmt"
	"net/http"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
)

// Body is a source's verified byte stream. It is not safe for concurrent
// use; the caller closes it.
type Body struct {
	// ContentType is the source's Content-Type as MediaType accepts it.
	ContentType string
	// Status is the source's status: 200 (whole) or 206 (a range).
	Status int

	c     *Call
	rd    *verified.Reader
	t     verified.Tree
	sizes *verified.Sizes
}

// Next returns the next verified group (or what remains of it), read in
// one phase of at most Timeout; io.EOF after the last. The slice is valid
// until the next call. Once the object's last group verified, its size is
// proven and recorded in the Requester's Sizes.
func (b *Body) Next() ([]byte, error) {
	var group []byte
	err := b.c.Read(func() error {
		var err error
		group, err = b.rd.Next()
		return err
	})
	if err == nil && b.rd.Offset() == b.t.Size {
		b.sizes.Add(b.t.ID, b.t.Size)
	}
	return group, err
}

// Close releases the request.
func (b *Body) Close() { b.c.Close() }

// Open requests groups first..last of t from base: the whole object
// without Range (200 expected) or the group-aligned range (206 with exactly
// that Content-Range). A Content-Length, when present, must be the span's.
// Framing errors wrap ErrProtocol; another status is a *StatusError. Every
// group Next returns verified against t.ID through t.Outboard.
func (r *Requester) Open(ctx context.Context, base string, t verified.Tree, first, last int) (*Body, error) {
	whole := t.Covers(first, last)
	rng, status := "", http.StatusOK
	if !whole {
		rng, status = t.RangeHeader(first, last), http.StatusPartialContent
	}
	c, err := r.Do(ctx, http.MethodGet, ObjectURL(base, t.ID), rng)
	if err != nil {
		return nil, err
	}
	if err := c.checkFraming(t, first, last, status, whole); err != nil {
		c.Close()
		return nil, err
	}
	return &Body{c: c, rd: verified.NewReader(c.resp.Body, t, first, last), t: t, sizes: r.Sizes, Status: status,
		ContentType: c.ContentType()}, nil
}

// checkFraming checks the status, Content-Range and Content-Length of a
// body answer against the span requested.
func (c *Call) checkFraming(t verified.Tree, first, last, status int, whole bool) error {
	if err := c.Expect(status); err != nil {
		return err
	}
	off, n := t.Span(first, last)
	if whole {
		off, n = 0, t.Size
	}
	if !whole && c.resp.Header.Get("Content-Range") != fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, t.Size) {
		return fmt.Errorf("%w: Content-Range %q", ErrProtocol, c.resp.Header.Get("Content-Range"))
	}
	if c.resp.ContentLength >= 0 && c.resp.ContentLength != n {
		return fmt.Errorf("%w: Content-Length %d, want %d", ErrProtocol, c.resp.ContentLength, n)
	}
	return nil
}

// Head asks base for id's size and Content-Type (as MediaType accepts it):
// HEAD {base}/o/{b3}, 200 with a Content-Length expected (else
// ErrProtocol). Nothing is verified.
func (r *Requester) Head(ctx context.Context, base string, id store.ID) (size int64, ctype string, err error) {
	c, err := r.Do(ctx, http.MethodHead, ObjectURL(base, id), "")
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	if err := c.Expect(http.StatusOK); err != nil {
		return 0, "", err
	}
	if c.resp.ContentLength < 0 {
		return 0, "", fmt.Errorf("%w: HEAD without Content-Length", ErrProtocol)
	}
	return c.resp.ContentLength, c.ContentType(), nil
}
