package edgecache

import (
	"errors"
	"io"
	"os"
	"sync"

	"github.com/ronhq/ron/store"
)

// Blob is an open stored body. It stays readable until Close even when its
// entry is evicted meanwhile. ReadAt follows io.ReaderAt.
type Blob interface {
	io.ReaderAt
	Size() int64
	Close() error
}

// FileSectioner is implemented by the Blobs kept in a file (the cache on
// disk). Section returns bytes [off, off+n) as an *io.LimitedReader over
// the Blob's own *os.File positioned at off, so that net/http sends them
// with sendfile(2). The handle belongs to this Blob alone while it is open,
// so its file offset is free to use; the reader is valid until the next
// Section, ReadAt is unaffected, and neither may run concurrently with a
// Section's reads.
type FileSectioner interface {
	Section(off, n int64) (io.Reader, error)
}

// Slicer is implemented by the Blobs kept in memory (amnesia): Slices
// returns bytes [off, off+n) as the stored slices themselves, in order,
// without copying. They must not be modified.
type Slicer interface {
	Slices(off, n int64) [][]byte
}

var errNegativeOffset = errors.New("edgecache: negative offset")

// fileBlob is a stored body on disk; the open file survives an unlink. Its
// handle comes from, and goes back to, the blob's idle handles (handles.go).
type fileBlob struct {
	f    *os.File
	size int64

	c    *Cache // nil: close the file on Close
	id   store.ID
	rec  *blobRec
	once sync.Once
	lr   io.LimitedReader
}

func (b *fileBlob) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errNegativeOffset
	}
	if off >= b.size {
		return 0, io.EOF
	}
	want := p
	if rest := b.size - off; int64(len(p)) > rest {
		want = p[:rest]
	}
	n, err := b.f.ReadAt(want, off)
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

// Section implements FileSectioner.
func (b *fileBlob) Section(off, n int64) (io.Reader, error) {
	if off < 0 || n < 0 || off > b.size-n {
		return nil, errNegativeOffset
	}
	if _, err := b.f.Seek(off, io.SeekStart); err != nil {
		return nil, err
	}
	b.lr = io.LimitedReader{R: b.f, N: n}
	return &b.lr, nil
}

func (b *fileBlob) Size() int64 { return b.size }

// Close gives the handle back to the cache's idle handles of the blob, or
// closes it. A second Close returns os.ErrClosed.
func (b *fileBlob) Close() error {
	err := os.ErrClosed
	b.once.Do(func() {
		if b.c != nil && b.c.putIdle(b.id, b.rec, b.f) {
			err = nil
			return
		}
		err = b.f.Close()
	})
	return err
}
