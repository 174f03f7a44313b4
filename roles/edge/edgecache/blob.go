package edgecache

import (
	"errors"
	"io"
	"os"
)

// Blob is an open stored body. It stays readable until Close even when its
// entry is evicted meanwhile. ReadAt follows io.ReaderAt.
type Blob interface {
	io.ReaderAt
	Size() int64
	Close() error
}

var errNegativeOffset = errors.New("edgecache: negative offset")

// fileBlob is a stored body on disk; the open file survives an unlink.
type fileBlob struct {
	f    *os.File
	size int64
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

func (b *fileBlob) Size() int64  { return b.size }
func (b *fileBlob) Close() error { return b.f.Close() }
