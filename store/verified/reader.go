package verified

import (
	"errors"
	"fmt"
	"io"

	"github.com/zeebo/blake3"

	"github.com/ronhq/ron/store"
)

// Reader verifies a stream of an object's bytes, chunks firstChunk through
// lastChunk of its List, as they are read. Read, Next and WriteTo return a
// chunk's bytes only after that whole chunk hashed to its list entry. When
// the Reader checks the whole hash (whole set and the range covering the
// whole object), the last chunk is held back until the BLAKE3 of all bytes
// equals the id. Before the last chunk is released the Reader also makes sure
// the stream ends there (ErrLong otherwise), so io.EOF means: every expected
// byte arrived, verified, and nothing else followed.
//
// Errors are sticky. They wrap ErrMismatch (a *MismatchError: chunk or
// whole-hash mismatch), ErrShort (the stream hit EOF early), ErrLong (extra
// bytes), ErrBadList (an inconsistent List or chunk range given to
// NewReader), or carry the underlying stream's read error.
//
// A Reader holds one chunk buffer (at most 64 KiB). It is not safe for
// concurrent use and does no I/O beyond reading body.
type Reader struct {
	body  io.Reader
	l     List
	next  int // next chunk to read from body
	last  int
	whole *blake3.Hasher // nil unless the whole hash is checked
	buf   []byte
	out   []byte // verified bytes not yet returned
	off   int64  // object offset of the next byte returned
	err   error  // sticky; io.EOF once the range was fully returned
	ended bool   // the last chunk was verified and released into out
}

// NewReader returns a Reader of body, which must hold exactly the bytes of
// chunks firstChunk..lastChunk of l (the whole object, or the chunk-aligned
// range that List.RangeHeader requests). whole asks for the whole-object
// hash check and is honoured when the range covers the whole object (it is
// ignored for a partial range, whose chunks are checked against the list
// alone). An empty range (lastChunk = firstChunk−1, e.g. an empty object)
// reads nothing but still checks that the stream is empty and, for the whole
// object, that the empty input hashes to the id.
func NewReader(body io.Reader, l List, firstChunk, lastChunk int, whole bool) *Reader {
	r := &Reader{body: body, l: l, next: firstChunk, last: lastChunk, off: int64(firstChunk) * store.ChunkSize}
	if err := l.check(); err != nil {
		r.err = err
		return r
	}
	if firstChunk < 0 || lastChunk >= l.Count() || firstChunk > lastChunk+1 {
		r.err = badListf("chunk range %d..%d outside 0..%d", firstChunk, lastChunk, l.Count()-1)
		return r
	}
	if whole && l.Covers(firstChunk, lastChunk) {
		r.whole = blake3.New()
	}
	return r
}

// Offset returns the object offset of the next byte Read, Next or WriteTo
// will return: the range's start plus every byte returned so far.
func (r *Reader) Offset() int64 { return r.off }

// Read implements io.Reader over the verified bytes.
func (r *Reader) Read(p []byte) (int, error) {
	if len(r.out) == 0 {
		if err := r.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	r.off += int64(n)
	return n, nil
}

// Next returns the verified bytes of the next chunk (or what Read left of
// the current one). The slice is valid until the next call. At the end of
// the range it returns io.EOF.
func (r *Reader) Next() ([]byte, error) {
	if len(r.out) == 0 {
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
	b := r.out
	r.out = nil
	r.off += int64(len(b))
	return b, nil
}

// WriteTo writes the verified bytes to w, one Write per chunk, until the end
// of the range or the first error (io.EOF is not an error here).
func (r *Reader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		b, err := r.Next()
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		n, err := w.Write(b)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
}

// fill reads and verifies the next chunk into out, or records why not.
func (r *Reader) fill() error {
	switch {
	case r.err != nil:
		return r.err
	case r.ended:
		r.err = io.EOF
		return r.err
	}
	if r.next > r.last {
		r.err = r.finish()
		if r.err == nil {
			r.err = io.EOF
		}
		return r.err
	}
	chunk, err := r.readChunk(r.next)
	if err != nil {
		r.err = err
		return err
	}
	r.next++
	if r.next > r.last {
		if err := r.finish(); err != nil {
			r.err = err
			return err
		}
		r.ended = true
	}
	r.out = chunk
	return nil
}

// readChunk reads chunk i whole and checks it against its list entry.
func (r *Reader) readChunk(i int) ([]byte, error) {
	n := r.l.ChunkLen(i)
	if r.buf == nil {
		r.buf = make([]byte, r.l.ChunkLen(r.next)) // the range's first chunk is its largest
	}
	chunk := r.buf[:n]
	if got, err := io.ReadFull(r.body, chunk); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: chunk %d: %d of %d bytes", ErrShort, i, got, n)
		}
		return nil, fmt.Errorf("verified: reading chunk %d: %w", i, err)
	}
	if blake3.Sum256(chunk) != r.l.Chunks[i] {
		return nil, &MismatchError{Chunk: i}
	}
	if r.whole != nil {
		_, _ = r.whole.Write(chunk)
	}
	return chunk, nil
}

// finish runs once every chunk of the range has been read and verified,
// before the last one is released: the whole hash, then the end of stream.
func (r *Reader) finish() error {
	if r.whole != nil {
		var got store.ID
		r.whole.Sum(got[:0])
		if got != r.l.ID {
			return &MismatchError{Chunk: -1}
		}
	}
	var one [1]byte
	n, err := io.ReadAtLeast(r.body, one[:], 1)
	switch {
	case n > 0:
		return fmt.Errorf("%w: bytes after chunk %d", ErrLong, r.last)
	case err == io.EOF:
		return nil
	}
	return fmt.Errorf("verified: reading past the end: %w", err)
}
