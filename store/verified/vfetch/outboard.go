package vfetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
)

// ObjectURL is base + "/o/b3:<hex>", base without a trailing slash.
func ObjectURL(base string, id store.ID) string { return base + "/o/" + id.String() }

// block is the read buffer of an outboard: one phase's worth.
type block = [store.ChunkSize]byte

var blocks = sync.Pool{New: func() any { return new(block) }}

// Outboard gets and parses {base}/o/{b3}/outboard (200 expected): Timeout
// to the headers, then Timeout per 64 KiB of the outboard, which may not
// pass verified.MaxOutboardBytes (announced or read: verified.ErrBadOutboard).
// The outboard is parsed strictly against id (verified.ParseTree). A 404
// from a source that answers HEAD /o/{b3} with 200 is ErrNoOutboard: a ron
// from before verified streaming, which this reader refuses (it never falls
// back to anything unverified). An outboard stating another size than one
// proven in Sizes is a *verified.MismatchError (the outboard is not the
// object's; no body is requested).
func (r *Requester) Outboard(ctx context.Context, base string, id store.ID) (verified.Tree, error) {
	doc, err := r.outboard(ctx, base, id)
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		if _, _, herr := r.Head(ctx, base, id); herr == nil {
			return verified.Tree{}, ErrNoOutboard
		}
	}
	if err != nil {
		return verified.Tree{}, err
	}
	t, err := verified.ParseTree(doc, id)
	if err == nil {
		_, err = r.Sizes.Check(t)
	}
	return t, err
}

// outboard reads the outboard's bytes.
func (r *Requester) outboard(ctx context.Context, base string, id store.ID) ([]byte, error) {
	c, err := r.Do(ctx, http.MethodGet, ObjectURL(base, id)+"/outboard", "")
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.Expect(http.StatusOK); err != nil {
		return nil, err
	}
	if c.resp.ContentLength > verified.MaxOutboardBytes {
		return nil, fmt.Errorf("%w: %d bytes announced", verified.ErrBadOutboard, c.resp.ContentLength)
	}
	return c.readBounded()
}

// readBounded reads the body, one 64 KiB block per phase, refusing it once
// it passes verified.MaxOutboardBytes.
func (c *Call) readBounded() ([]byte, error) {
	var doc bytes.Buffer
	buf := blocks.Get().(*block)
	defer blocks.Put(buf)
	for done := false; !done; {
		err := c.Read(func() error {
			n, err := io.ReadFull(c.resp.Body, buf[:])
			doc.Write(buf[:n])
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				done, err = true, nil
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if doc.Len() > verified.MaxOutboardBytes {
			return nil, fmt.Errorf("%w: longer than %d bytes", verified.ErrBadOutboard, verified.MaxOutboardBytes)
		}
	}
	return doc.Bytes(), nil
}
