package verified

import (
	"errors"
	"fmt"
	"io"

	"github.com/ronhq/ron/store/bao"
)

// Reader verifies a stream of an object's bytes, groups first through last
// of its Tree, as they are read. Read, Next and WriteTo return a group's
// bytes only after that whole group verified against the id
// (bao.VerifyGroup); nothing else is held back. Before the range's last
// group is released the Reader also makes sure the stream ends there
// (ErrLong otherwise), so io.EOF means: every expected byte arrived,
// verified, and nothing else followed.
//
// Errors are sticky. They wrap ErrMismatch (a *MismatchError naming the
// group), ErrShort (the stream hit EOF early), ErrLong (extra bytes),
// ErrBadOutboard (an inconsistent Tree or group range given to NewReader),
// or carry the underlying stream's read error.
//
// A Reader holds one group buffer (at most 64 KiB). It is not safe for
// concurrent use and does no I/O beyond reading body.
type Reader struct {
	body  io.Reader
	t     Tree
	next  int // next group to read from body
	last  int
	buf   []byte
	out   []byte // verified bytes not yet returned
	off   int64  // object offset of the next byte returned
	err   error  // sticky; io.EOF once the range was fully returned
	ended bool   // the last group was verified and released into out
}

// NewReader returns a Reader of body, which must hold exactly the bytes of
// groups first..last of t (the whole object, or the group-aligned range
// that Tree.RangeHeader requests). An empty range (last = first−1, as for
// the empty object) reads nothing but still checks that the stream is
// empty.
func NewReader(body io.Reader, t Tree, first, last int) *Reader {
	r := &Reader{body: body, t: t, next: first, last: last, off: int64(first) * bao.GroupSize}
	if err := t.check(); err != nil {
		r.err = err
		return r
	}
	if first < 0 || last >= t.Count() || first > last+1 {
		r.err = fmt.Errorf("%w: group range %d..%d outside 0..%d", ErrBadOutboard, first, last, t.Count()-1)
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

// Next returns the verified bytes of the next group (or what Read left of
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

// WriteTo writes the verified bytes to w, one Write per group, until the
// end of the range or the first error (io.EOF is not an error here).
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

// fill reads and verifies the next group into out, or records why not.
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
	group, err := r.readGroup(r.next)
	if err == nil && r.next == r.last {
		err = r.finish()
		r.ended = err == nil
	}
	if err != nil {
		r.err = err
		return err
	}
	r.next++
	r.out = group
	return nil
}

// readGroup reads group i whole and verifies it against the id.
func (r *Reader) readGroup(i int) ([]byte, error) {
	n := r.t.GroupLen(i)
	if r.buf == nil {
		r.buf = make([]byte, r.t.GroupLen(r.next)) // the range's first group is its largest
	}
	group := r.buf[:n]
	if got, err := io.ReadFull(r.body, group); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: group %d: %d of %d bytes", ErrShort, i, got, n)
		}
		return nil, fmt.Errorf("verified: reading group %d: %w", i, err)
	}
	if err := bao.VerifyGroup(group, r.t.Outboard, r.t.ID, int64(i)); err != nil {
		return nil, err
	}
	return group, nil
}

// finish runs once every group of the range has been read and verified,
// before the last one is released: the stream must end there.
func (r *Reader) finish() error {
	var one [1]byte
	n, err := io.ReadAtLeast(r.body, one[:], 1)
	switch {
	case n > 0:
		return fmt.Errorf("%w: bytes after group %d", ErrLong, r.last)
	case err == io.EOF:
		return nil
	}
	return fmt.Errorf("verified: reading past the end: %w", err)
}
