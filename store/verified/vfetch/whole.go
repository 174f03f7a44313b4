package vfetch

import (
	"errors"
	"fmt"
	"io"

	"github.com/zeebo/blake3"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
)

// WholeReader is verified.Reader for a source that sends no chunk list: it
// cuts a body of a known size into 64 KiB chunks, hashes them all, and holds
// the last one back until the BLAKE3 of the whole body equals the id and the
// body ends there. So, as with verified.Reader, io.EOF means every byte
// arrived, verified, and nothing followed; but a wrong body is only detected
// at its end (earlier chunks are released unverified: use it only for
// sources trusted not to lie, or for consumers that can take back what they
// received, such as a cache fill that is aborted). Its errors match
// store/verified's (ErrMismatch as a *verified.MismatchError with Chunk -1,
// ErrShort, ErrLong) or carry the body's read error, and are sticky. It is
// not safe for concurrent use.
type WholeReader struct {
	body io.Reader
	size int64
	id   store.ID
	h    *blake3.Hasher
	buf  []byte
	read int64 // bytes read from body
	err  error // sticky; io.EOF once the last chunk was returned
}

// NewWholeReader returns a WholeReader of body, which must hold exactly the
// size bytes of object id.
func NewWholeReader(body io.Reader, size int64, id store.ID) *WholeReader {
	return &WholeReader{body: body, size: size, id: id, h: blake3.New()}
}

// Next returns the next chunk: every one but the last as soon as it is
// read, the last once the whole hash matched. At the end it returns io.EOF.
// The slice is valid until the next call.
func (r *WholeReader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.read == r.size {
		if r.err = r.finish(); r.err == nil {
			r.err = io.EOF
		}
		return nil, r.err
	}
	chunk, err := r.chunk()
	if err == nil && r.read == r.size {
		if err = r.finish(); err == nil {
			r.err = io.EOF // the next call ends the stream
		}
	}
	if err != nil {
		r.err = err
		return nil, err
	}
	return chunk, nil
}

// chunk reads the next chunk whole and hashes it.
func (r *WholeReader) chunk() ([]byte, error) {
	n := int(min(store.ChunkSize, r.size-r.read))
	if r.buf == nil {
		r.buf = make([]byte, n) // the first chunk is the largest
	}
	chunk := r.buf[:n]
	got, err := io.ReadFull(r.body, chunk)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: %d of %d bytes", verified.ErrShort, r.read+int64(got), r.size)
		}
		return nil, fmt.Errorf("vfetch: reading the body: %w", err)
	}
	r.read += int64(n)
	_, _ = r.h.Write(chunk)
	return chunk, nil
}

// finish checks the whole hash and the end of the body.
func (r *WholeReader) finish() error {
	var got store.ID
	r.h.Sum(got[:0])
	if got != r.id {
		return &verified.MismatchError{Chunk: -1}
	}
	var one [1]byte
	n, err := io.ReadAtLeast(r.body, one[:], 1)
	switch {
	case n > 0:
		return fmt.Errorf("%w: bytes after %d", verified.ErrLong, r.size)
	case err == io.EOF:
		return nil
	}
	return fmt.Errorf("vfetch: reading past the end: %w", err)
}
