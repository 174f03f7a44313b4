// Package bao is the BLAKE3 tree work of ron's verified transfer
// (docs/storage.md §4): the Bao outboard of an object — its length and the
// chaining values of every parent node of its BLAKE3 tree, in pre-order,
// with 64 KiB chunk groups (Bao group parameter 6) — and Bao slices, which
// carry the covering groups of a byte range with the proof path to the
// root. The root is the object's id, so a reader checks every 64 KiB group
// against the id itself, with nothing else to trust: not the source of the
// bytes, not the source of the outboard.
//
// The tree code is lukechampine.com/blake3/bao's; this package fixes the
// group size, checks the shapes of outside input (ParseOutboard), turns
// failures into errors and streams only verified bytes: Verify writes a
// group to its destination only after the group hashed to its place in the
// tree, so a destination never receives a byte that did not verify.
package bao

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	lbao "lukechampine.com/blake3/bao"

	"github.com/ronhq/ron/internal/iox"
)

// ID is an object id: the BLAKE3-256 of the object, the root of its tree.
// ID converts to it implicitly (the package does not import store,
// which builds on it).
type ID = [32]byte

// GroupLog is the Bao group parameter: groups of 2^6 BLAKE3 chunks.
const GroupLog = 6

// GroupSize is the bytes of one chunk group (64 KiB), the unit every reader
// verifies before it emits.
const GroupSize = 1024 << GroupLog

// headerSize is the outboard's little-endian length prefix.
const headerSize = 8

var (
	// ErrMismatch: bytes, an outboard or a slice do not hash to the id.
	ErrMismatch = errors.New("bao: does not verify against the id")
	// ErrBadOutboard: an outboard's shape is wrong for the object's size.
	ErrBadOutboard = errors.New("bao: invalid outboard")
	// ErrBadRange: a slice range outside the object.
	ErrBadRange = errors.New("bao: range outside the object")
)

// tree is the Bao tree work at one group size; ron uses ours (GroupLog),
// the tests also Bao's standard group 0 to check the wiring against the
// official vectors.
type tree struct{ log int }

// ours is ron's tree: 64 KiB groups.
var ours = tree{log: GroupLog}

func (t tree) groupSize() int64 { return 1024 << t.log }

// OutboardSize returns the size of the outboard of an object of size bytes:
// the 8-byte header and 64 bytes per group beyond the first.
func OutboardSize(size int64) int64 { return ours.outboardSize(size) }

func (t tree) outboardSize(size int64) int64 {
	return int64(lbao.EncodedSize(int(size), t.log, true))
}

// Outboard is a parsed outboard: its shape matches its object's size. It
// is not verified until it is used with the object's bytes and id.
type Outboard []byte

// Size returns the object size the outboard's header states.
func (o Outboard) Size() int64 { return int64(binary.LittleEndian.Uint64(o[:headerSize])) }

// ParseOutboard checks b as the outboard of an object of size bytes: the
// header must state size and the length must be OutboardSize(size). It
// copies nothing; the Outboard aliases b.
func ParseOutboard(b []byte, size int64) (Outboard, error) { return ours.parseOutboard(b, size) }

func (t tree) parseOutboard(b []byte, size int64) (Outboard, error) {
	if size < 0 {
		return nil, fmt.Errorf("%w: negative object size %d", ErrBadOutboard, size)
	}
	if want := t.outboardSize(size); int64(len(b)) != want {
		return nil, fmt.Errorf("%w: %d bytes, want %d for an object of %d bytes", ErrBadOutboard, len(b), want, size)
	}
	if got := binary.LittleEndian.Uint64(b[:headerSize]); got != uint64(size) {
		return nil, fmt.Errorf("%w: states %d bytes, the object has %d", ErrBadOutboard, got, size)
	}
	return Outboard(b), nil
}

// Encode reads size bytes from data and returns their outboard and id.
func Encode(data io.Reader, size int64) (Outboard, ID, error) { return ours.encode(data, size) }

func (t tree) encode(data io.Reader, size int64) (Outboard, ID, error) {
	if size < 0 {
		return nil, ID{}, fmt.Errorf("%w: negative object size %d", ErrBadOutboard, size)
	}
	buf := &writerAt{b: make([]byte, t.outboardSize(size))}
	root, err := lbao.Encode(buf, data, size, t.log, true)
	if err != nil {
		return nil, ID{}, err
	}
	return Outboard(buf.b), ID(root), nil
}

// Verify streams the object from data to dst, checking every group against
// id with ob before writing it: dst receives a verified prefix of the
// object and, when Verify returns nil, all of it. A group that does not
// verify (wrong bytes, or an outboard that is not this object's) is an
// ErrMismatch naming the group; data that ends early is
// io.ErrUnexpectedEOF; data that goes on past the object is an error too.
func Verify(dst io.Writer, data io.Reader, ob Outboard, id ID) error {
	return ours.verify(dst, data, ob, id)
}

func (t tree) verify(dst io.Writer, data io.Reader, ob Outboard, id ID) error {
	cw := &iox.CountingWriter{W: dst}
	ok, err := lbao.Decode(cw, data, bytes.NewReader(ob), t.log, id)
	if err != nil {
		return fmt.Errorf("bao: after %d verified bytes: %w", cw.N, unexpectedEOF(err))
	}
	if !ok {
		return &MismatchError{Group: cw.N / t.groupSize()}
	}
	if n, _ := data.Read(make([]byte, 1)); n > 0 {
		return fmt.Errorf("bao: data goes on past the object's %d bytes", ob.Size())
	}
	return nil
}

// VerifyGroup checks group, the bytes of group g (0-based; GroupSize bytes,
// fewer for the last group), against id with ob: the group's chaining value
// and the parents on its path must hash up to the root. It needs only the
// outboard and the group, so a reader checks any group, in any order,
// before it emits a byte of it. A group that does not verify (wrong bytes,
// wrong length, or an outboard that is not this object's) is a
// *MismatchError; g outside the object is ErrBadRange.
func VerifyGroup(group []byte, ob Outboard, id ID, g int64) error {
	return ours.verifyGroup(group, ob, id, g)
}

func (t tree) verifyGroup(group []byte, ob Outboard, id ID, g int64) error {
	size, gs := ob.Size(), t.groupSize()
	if g < 0 || size == 0 || g > (size-1)/gs {
		return fmt.Errorf("%w: group %d of an object of %d bytes", ErrBadRange, g, size)
	}
	if want := min(gs, size-g*gs); int64(len(group)) != want || !lbao.VerifyChunk(group, ob, t.log, uint64(g*gs), id) {
		return &MismatchError{Group: g}
	}
	return nil
}

// Span returns the group-aligned byte span [from, to) of an object of size
// bytes that covers [start, start+length): the data a slice of that range
// carries. The range must lie inside the object and not be empty.
func Span(start, length, size int64) (from, to int64, err error) {
	return ours.span(start, length, size)
}

func (t tree) span(start, length, size int64) (from, to int64, err error) {
	if start < 0 || length <= 0 || start > size || length > size-start {
		return 0, 0, fmt.Errorf("%w: %d bytes at %d of %d", ErrBadRange, length, start, size)
	}
	g := t.groupSize()
	from = start / g * g
	to = min((start+length+g-1)/g*g, size)
	return from, to, nil
}

// ExtractSlice writes the Bao slice of [start, start+length) to dst: the
// header, the parents on the paths to the covering groups and those groups'
// bytes, in pre-order. groups must yield exactly the span Span returns, and
// ob must be the object's outboard. Nothing is verified here: the slice is
// for a reader that verifies it (VerifySlice, or any Bao implementation
// with group parameter 6).
func ExtractSlice(dst io.Writer, groups io.Reader, ob Outboard, start, length int64) error {
	return ours.extractSlice(dst, groups, ob, start, length)
}

func (t tree) extractSlice(dst io.Writer, groups io.Reader, ob Outboard, start, length int64) error {
	if _, _, err := t.span(start, length, ob.Size()); err != nil {
		return err
	}
	return unexpectedEOF(lbao.ExtractSlice(dst, groups, bytes.NewReader(ob), t.log, uint64(start), uint64(length)))
}

// VerifySlice reads a Bao slice of [start, start+length) of the object id
// from slice and writes the range's bytes to dst, each group only after it
// verified against id. A slice that does not verify is an ErrMismatch; a
// slice of another range or length, or a truncated one, fails too. dst may
// have received a verified prefix of the range when an error is returned.
func VerifySlice(dst io.Writer, slice io.Reader, id ID, start, length int64) error {
	return ours.verifySlice(dst, slice, id, start, length)
}

func (t tree) verifySlice(dst io.Writer, slice io.Reader, id ID, start, length int64) error {
	if start < 0 || length <= 0 {
		return fmt.Errorf("%w: %d bytes at %d", ErrBadRange, length, start)
	}
	var hdr [headerSize]byte
	if _, err := io.ReadFull(slice, hdr[:]); err != nil {
		return fmt.Errorf("bao: slice header: %w", unexpectedEOF(err))
	}
	if size := binary.LittleEndian.Uint64(hdr[:]); size < uint64(start) || size-uint64(start) < uint64(length) {
		return fmt.Errorf("%w: the slice states an object of %d bytes, not holding %d bytes at %d", ErrMismatch, size, length, start)
	}
	cw := &iox.CountingWriter{W: dst}
	ok, err := lbao.DecodeSlice(cw, io.MultiReader(bytes.NewReader(hdr[:]), slice), t.log, uint64(start), uint64(length), id)
	switch {
	case err != nil:
		return fmt.Errorf("bao: slice after %d verified bytes: %w", cw.N, unexpectedEOF(err))
	case !ok:
		return &MismatchError{Group: (start + cw.N) / t.groupSize()}
	}
	if n, _ := slice.Read(make([]byte, 1)); n > 0 {
		return fmt.Errorf("%w: the slice goes on past its range", ErrMismatch)
	}
	return nil
}

// MismatchError is an ErrMismatch at one group: the first group (0-based,
// of the whole object) that did not verify.
type MismatchError struct {
	Group int64
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("bao: group %d does not verify against the id", e.Group)
}

// Is makes errors.Is(err, ErrMismatch) true.
func (e *MismatchError) Is(target error) bool { return target == ErrMismatch }

// unexpectedEOF reports a stream that ended inside the data as
// io.ErrUnexpectedEOF, whichever of the two EOFs the reader returned.
func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// writerAt is an io.WriterAt over a buffer of the final size.
type writerAt struct{ b []byte }

func (w *writerAt) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(w.b)) {
		return 0, fmt.Errorf("bao: write of %d bytes at %d past the outboard's %d", len(p), off, len(w.b))
	}
	return copy(w.b[off:], p), nil
}
