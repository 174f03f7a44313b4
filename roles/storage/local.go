package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/store"
)

// Route templates LocalClient calls are counted under, as the HTTP handlers
// would be (busy rejections, bytes in).
const (
	endpointPost     = "/o"
	endpointPut      = "/o/{b3}"
	endpointObject   = "/o/{b3}"
	endpointOutboard = "/o/{b3}/outboard"
)

// LocalClient is the in-process implementation of Client used when storage
// runs in the same process as its caller. It calls the same code as the
// HTTP handlers, so it answers exactly like HTTPClient: the same
// *httpx.Error values (status, code, details), the same limits
// (max_object_bytes 413, draining/not-ready 503, admission 429, Content-Type
// rules, 409 hash_mismatch, 404 with details.reason "quarantined", 507) and
// the same chunk verification on reads. It skips only what HTTP adds: tokens
// (in-process callers are trusted), headers and the stall timeout.
type LocalClient struct {
	r *Role
}

var _ storageapi.Client = (*LocalClient)(nil)

// NewLocalClient returns a client of r. It may be built before r starts but
// must be used only between r's Start and Stop.
func NewLocalClient(r *Role) *LocalClient { return &LocalClient{r: r} }

// Put implements Client like POST /o (PUT /o/{b3} when want is set): size is
// the Content-Length (-1 unknown), contentType the Content-Type header.
// A body that fails to read, or ctx ending, aborts the write (nothing is
// stored) and returns that error.
func (l *LocalClient) Put(ctx context.Context, body io.Reader, size int64, want *store.ID, contentType string) (storageapi.PutResult, error) {
	h := http.Header{}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	w := writeReq{want: want, header: h, length: size, endpoint: endpointPost, body: newStallReader(body, nil, 0)}
	if want != nil {
		w.endpoint = endpointPut
	}
	var out storageapi.PutResult
	err := l.r.putObject(ctx, w, func(info store.Info, created bool) error {
		out = storageapi.PutResult{CID: info.ID.String(), Size: info.Size, Created: created}
		return nil
	})
	var ab *errAborted
	if errors.As(err, &ab) {
		return storageapi.PutResult{}, ab.err
	}
	return out, err
}

// Get implements Client like GET /o/{b3}: the first chunk is verified before
// Get returns (500 corrupt), every later chunk before its bytes are read;
// a corrupt chunk fails Read with 500 corrupt. The caller must Close the
// body: it holds a GET pool slot until then.
func (l *LocalClient) Get(ctx context.Context, id store.ID) (io.ReadCloser, storageapi.ObjectInfo, error) {
	obj, done, err := l.r.openObject(ctx, endpointObject, id)
	if err != nil {
		return nil, storageapi.ObjectInfo{}, err
	}
	cr := newChunkReader(obj, l.r.metrics.chunksVerified())
	if err := cr.verifyFirst(0); err != nil {
		cr.release()
		done()
		return nil, storageapi.ObjectInfo{}, err
	}
	info := obj.Info()
	return &objectReader{ctx: ctx, cr: cr, end: info.Size, done: done}, objectInfo(info), nil
}

// Stat implements Client like HEAD /o/{b3} (no verification).
func (l *LocalClient) Stat(ctx context.Context, id store.ID) (storageapi.ObjectInfo, error) {
	obj, done, err := l.r.openObject(ctx, endpointObject, id)
	if err != nil {
		return storageapi.ObjectInfo{}, err
	}
	defer done()
	return objectInfo(obj.Info()), nil
}

// Outboard implements Client like GET /o/{b3}/outboard: a v1 object is
// upgraded first.
func (l *LocalClient) Outboard(ctx context.Context, id store.ID) ([]byte, error) {
	obj, done, err := l.r.openObject(ctx, endpointOutboard, id)
	if err != nil {
		return nil, err
	}
	defer done()
	ob, err := l.r.outboardOf(ctx, obj)
	return bytes.Clone(ob), err
}

// objectInfo is what a HEAD's headers say about an object.
func objectInfo(info store.Info) storageapi.ObjectInfo {
	return storageapi.ObjectInfo{ID: info.ID, Size: info.Size, ContentType: contentType(info)}
}

// objectReader reads bytes [off, end) of an object (the whole object for
// LocalClient.Get, a slice's covering groups) through the verifying chunk
// reader.
type objectReader struct {
	ctx context.Context
	cr  *chunkReader
	end int64
	off int64

	once sync.Once
	done func()
}

// Read returns verified bytes; ctx's end or a corrupt chunk fails it.
func (o *objectReader) Read(p []byte) (int, error) {
	if o.off >= o.end {
		return 0, io.EOF
	}
	if err := o.ctx.Err(); err != nil {
		return 0, err
	}
	part, err := o.cr.at(o.off)
	if err != nil {
		return 0, storeError(err)
	}
	n := copy(p, part[:min(int64(len(part)), o.end-o.off)])
	o.off += int64(n)
	return n, nil
}

// Close closes the object and frees the GET pool slot; it is idempotent.
func (o *objectReader) Close() error {
	o.once.Do(func() {
		o.cr.release()
		o.done()
	})
	return nil
}
