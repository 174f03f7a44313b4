package objects

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
)

// objectPath is the path of an object on a source.
func objectPath(id store.ID) string { return "/o/" + id.String() }

// probe is what a source told about an object before its body: the size
// and, over HTTP, the chunk list; in-process, the open whole-body answer.
type probe struct {
	o       *Objects
	src     *Source
	id      store.ID
	timeout time.Duration
	size    int64
	list    *verified.List
	c       *call // in-process: the whole-body answer until whole takes it
}

// probe asks src about id: GET {base}/o/{b3}/chunks over HTTP; in-process
// GET /o/{b3} itself, whose Content-Length gives the size.
func (o *Objects) probe(ctx context.Context, src *Source, id store.ID, timeout time.Duration) (*probe, error) {
	p := &probe{o: o, src: src, id: id, timeout: timeout}
	if !src.InProcess {
		l, err := o.fetchList(ctx, src, id, timeout)
		if err != nil {
			return nil, err
		}
		p.list, p.size = &l, l.Size
		return p, nil
	}
	c, err := o.do(ctx, src, http.MethodGet, objectPath(id), "", timeout)
	if err != nil {
		return nil, err
	}
	if err := c.expect(http.StatusOK); err != nil {
		c.close()
		return nil, err
	}
	if c.resp.ContentLength < 0 {
		c.close()
		return nil, fmt.Errorf("%w: no Content-Length", errProtocol)
	}
	p.c, p.size = c, c.resp.ContentLength
	return p, nil
}

// close releases the in-process answer when whole did not take it.
func (p *probe) close() {
	if p.c != nil {
		p.c.close()
		p.c = nil
	}
}

// fetchList gets and parses {base}/o/{b3}/chunks: timeout to the headers,
// then per 64 KiB of the document, which may not pass verified.MaxListBytes.
func (o *Objects) fetchList(ctx context.Context, src *Source, id store.ID, timeout time.Duration) (verified.List, error) {
	c, err := o.do(ctx, src, http.MethodGet, objectPath(id)+"/chunks", "", timeout)
	if err != nil {
		return verified.List{}, err
	}
	defer c.close()
	if err := c.expect(http.StatusOK); err != nil {
		return verified.List{}, err
	}
	if c.resp.ContentLength > verified.MaxListBytes {
		return verified.List{}, fmt.Errorf("%w: %d bytes announced", verified.ErrBadList, c.resp.ContentLength)
	}
	var doc bytes.Buffer
	block := getBuf()
	defer putBuf(block)
	for done := false; !done; {
		err := c.read(func() error {
			n, err := io.ReadFull(c.resp.Body, block[:])
			doc.Write(block[:n])
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				done, err = true, nil
			}
			return err
		})
		if err != nil {
			return verified.List{}, err
		}
		if doc.Len() > verified.MaxListBytes {
			return verified.List{}, fmt.Errorf("%w: longer than %d bytes", verified.ErrBadList, verified.MaxListBytes)
		}
	}
	return verified.ParseList(doc.Bytes(), id)
}

// chunkReader yields verified chunks, then io.EOF (verified.Reader and
// wholeReader).
type chunkReader interface {
	Next() ([]byte, error)
}

// body is a source's verified byte stream.
type body struct {
	c      *call
	rd     chunkReader
	ctype  string // the source's Content-Type, or application/octet-stream
	status int    // the source's status: 200 or 206
}

// next returns the next verified chunk under the progress deadline.
func (b *body) next() ([]byte, error) {
	var chunk []byte
	err := b.c.read(func() error {
		var err error
		chunk, err = b.rd.Next()
		return err
	})
	return chunk, err
}

func (b *body) close() { b.c.close() }

// whole opens the whole body: in-process the answer probe opened, hashed
// whole; over HTTP GET /o/{b3}, verified chunk by chunk against the list
// and by the whole hash.
func (p *probe) whole(ctx context.Context) (*body, error) {
	if p.c != nil {
		c := p.c
		p.c = nil
		return &body{c: c, rd: newWholeReader(c.resp.Body, p.size, p.id), status: http.StatusOK,
			ctype: mediaType(c.resp.Header.Get("Content-Type"))}, nil
	}
	if p.list == nil {
		return nil, fmt.Errorf("%w: the in-process answer was already read", errProtocol)
	}
	return p.open(ctx, 0, p.list.Count()-1)
}

// span opens chunks first..last of the object (the whole body when they
// cover it). In-process, the chunk list is fetched first.
func (p *probe) span(ctx context.Context, first, last int) (*body, error) {
	if err := p.ensureList(ctx); err != nil {
		return nil, err
	}
	return p.open(ctx, first, last)
}

// ensureList fetches the chunk list when the probe has none (in-process),
// releasing the whole-body answer.
func (p *probe) ensureList(ctx context.Context) error {
	if p.list != nil {
		return nil
	}
	p.close()
	l, err := p.o.fetchList(ctx, p.src, p.id, p.timeout)
	if err != nil {
		return err
	}
	if l.Size != p.size {
		return fmt.Errorf("%w: chunk list of %d bytes for a body of %d", errProtocol, l.Size, p.size)
	}
	p.list = &l
	return nil
}

// open requests chunks first..last of the list: without Range for the
// whole object (200, whole hash checked), else the chunk-aligned Range (206
// with exactly that Content-Range).
func (p *probe) open(ctx context.Context, first, last int) (*body, error) {
	l := *p.list
	whole := l.Covers(first, last)
	rng, status := "", http.StatusOK
	if !whole {
		rng, status = l.RangeHeader(first, last), http.StatusPartialContent
	}
	c, err := p.o.do(ctx, p.src, http.MethodGet, objectPath(p.id), rng, p.timeout)
	if err != nil {
		return nil, err
	}
	if err := checkFraming(c, l, first, last, status, whole); err != nil {
		c.close()
		return nil, err
	}
	return &body{c: c, rd: verified.NewReader(c.resp.Body, l, first, last, true), status: status,
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
