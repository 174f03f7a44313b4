package repair

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ronhq/ron/store"
)

// ChunkSource yields an object's verified chunks in order, then io.EOF:
// a local object read chunk by chunk, or a vfetch.Body.
type ChunkSource interface {
	Next() ([]byte, error)
}

// errLongSource: a source yielded more chunks than the object's size allows.
var errLongSource = errors.New("repair: source yielded more than the object's size")

// Reader returns the bytes of an object of size bytes read from src, taking
// the chunk's tokens from the pacer before each chunk is read (65,536 for a
// full chunk, the last chunk its own size), so the transfer runs at the pace.
// onBytes (may be nil) receives each chunk's length once it is read. After
// the last chunk the source is read once more and must end (io.EOF): a
// verified source makes sure nothing follows the object there.
func (p *Pacer) Reader(ctx context.Context, size int64, src ChunkSource, onBytes func(int)) io.Reader {
	return &pacedReader{ctx: ctx, p: p, size: size, count: store.ChunkCount(size), src: src, onBytes: onBytes}
}

type pacedReader struct {
	ctx     context.Context
	p       *Pacer
	size    int64
	count   int
	next    int // index of the next chunk to read
	src     ChunkSource
	onBytes func(int)
	buf     []byte // unread part of the current chunk
	err     error  // sticky
}

func (r *pacedReader) Read(b []byte) (int, error) {
	for len(r.buf) == 0 && r.err == nil {
		r.err = r.fill()
	}
	if len(r.buf) == 0 {
		return 0, r.err
	}
	n := copy(b, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// fill reads the next chunk into buf, or returns io.EOF once the source
// confirmed its end.
func (r *pacedReader) fill() error {
	if r.next == r.count {
		if _, err := r.src.Next(); err != io.EOF {
			if err == nil {
				return errLongSource
			}
			return err
		}
		return io.EOF
	}
	want := store.ChunkLen(r.size, r.next)
	if err := r.p.Wait(r.ctx, want); err != nil {
		return err
	}
	chunk, err := r.src.Next()
	if err != nil {
		if err == io.EOF {
			return fmt.Errorf("repair: source ended at chunk %d of %d: %w", r.next, r.count, io.ErrUnexpectedEOF)
		}
		return err
	}
	if len(chunk) != want {
		return fmt.Errorf("repair: chunk %d has %d bytes, want %d", r.next, len(chunk), want)
	}
	r.next++
	r.buf = chunk
	if r.onBytes != nil {
		r.onBytes(len(chunk))
	}
	return nil
}
