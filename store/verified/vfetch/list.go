package vfetch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
)

// ObjectURL is base + "/o/b3:<hex>", base without a trailing slash.
func ObjectURL(base string, id store.ID) string { return base + "/o/" + id.String() }

// block is the read buffer of a chunk list: one phase's worth.
type block = [store.ChunkSize]byte

var blocks = sync.Pool{New: func() any { return new(block) }}

// List gets and parses {base}/o/{b3}/chunks (200 expected): Timeout to the
// headers, then Timeout per 64 KiB of the document, which may not pass
// verified.MaxListBytes (announced or read: verified.ErrBadList). The list
// is parsed strictly against id (verified.ParseList).
func (r *Requester) List(ctx context.Context, base string, id store.ID) (verified.List, error) {
	c, err := r.Do(ctx, http.MethodGet, ObjectURL(base, id)+"/chunks", "")
	if err != nil {
		return verified.List{}, err
	}
	defer c.Close()
	if err := c.Expect(http.StatusOK); err != nil {
		return verified.List{}, err
	}
	if c.resp.ContentLength > verified.MaxListBytes {
		return verified.List{}, fmt.Errorf("%w: %d bytes announced", verified.ErrBadList, c.resp.ContentLength)
	}
	doc, err := c.readList()
	if err != nil {
		return verified.List{}, err
	}
	return verified.ParseList(doc, id)
}

// readList reads the list document, one 64 KiB block per phase.
func (c *Call) readList() ([]byte, error) {
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
		if doc.Len() > verified.MaxListBytes {
			return nil, fmt.Errorf("%w: longer than %d bytes", verified.ErrBadList, verified.MaxListBytes)
		}
	}
	return doc.Bytes(), nil
}
