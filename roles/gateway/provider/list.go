package provider

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
)

// objectURL is base + "/o/b3:<hex>".
func objectURL(base string, id store.ID) string { return base + "/o/" + id.String() }

// fetchList gets and parses {base}/o/{b3}/chunks: Timeout to the headers,
// then Timeout per 64 KiB of the document, which may not pass
// verified.MaxListBytes.
func (f *Fetcher) fetchList(ctx context.Context, base string, id store.ID) (verified.List, error) {
	c, err := f.do(ctx, http.MethodGet, objectURL(base, id)+"/chunks", "")
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
	block := make([]byte, store.ChunkSize)
	for done := false; !done; {
		err := c.read(f, func() error {
			n, err := io.ReadFull(c.resp.Body, block)
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
