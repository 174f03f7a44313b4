package verified_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/bao"
	"github.com/ronhq/ron/store/storetest"
	"github.com/ronhq/ron/store/verified"
)

// FuzzParseTree: ParseTree never panics; what it accepts has the shape of
// its stated size; everything it refuses wraps ErrBadOutboard, or is a
// mismatch for a size-0 claim about another object.
func FuzzParseTree(f *testing.F) {
	vec := verified.TreeOf(storetest.Pattern(102400))
	for _, b := range [][]byte{
		vec.Outboard,
		verified.TreeOf(nil).Outboard,
		verified.TreeOf([]byte("hello world")).Outboard,
		verified.TreeOf(storetest.Pattern(5*cs + 7)).Outboard,
		vec.Outboard[:len(vec.Outboard)-1],
		append(bytes.Clone(vec.Outboard), 0),
		binary.LittleEndian.AppendUint64(nil, 1<<63),
		binary.LittleEndian.AppendUint64(nil, verified.MaxSize+1),
		{}, {1, 2, 3},
	} {
		f.Add(b, false)
		f.Add(b, true)
	}
	f.Fuzz(func(t *testing.T, b []byte, emptyIDWanted bool) {
		id := vec.ID
		if emptyIDWanted {
			id = store.Sum(nil)
		}
		tr, err := verified.ParseTree(b, id)
		if err != nil {
			if !errors.Is(err, verified.ErrBadOutboard) && !errors.Is(err, verified.ErrMismatch) {
				t.Fatalf("error %v wraps neither ErrBadOutboard nor ErrMismatch", err)
			}
			return
		}
		if tr.Size < 0 || tr.Size > verified.MaxSize || int64(len(tr.Outboard)) != bao.OutboardSize(tr.Size) ||
			tr.ID != id || tr.Size == 0 && !emptyIDWanted {
			t.Fatalf("inconsistent tree accepted: size %d, %d-byte outboard", tr.Size, len(tr.Outboard))
		}
		if _, err := bao.ParseOutboard(tr.Outboard, tr.Size); err != nil {
			t.Fatalf("accepted an outboard bao refuses: %v", err)
		}
	})
}

// FuzzReader: whatever the stream and the outboard hold, the Reader only
// ever returns a prefix of the true bytes of the requested range, and
// returns all of them with a clean EOF exactly when the stream is the true
// range and the outboard the true one.
func FuzzReader(f *testing.F) {
	f.Add(uint32(2*cs+100), uint8(0), uint8(2), uint32(cs+1), uint8(1), uint32(0), uint8(0))
	f.Add(uint32(10), uint8(0), uint8(0), uint32(0), uint8(0), uint32(0), uint8(1))
	f.Add(uint32(3*cs), uint8(1), uint8(2), uint32(5), uint8(255), uint32(7), uint8(2))
	f.Add(uint32(0), uint8(0), uint8(0), uint32(0), uint8(0), uint32(0), uint8(0))
	f.Add(uint32(4*cs), uint8(0), uint8(3), uint32(9), uint8(3), uint32(0), uint8(4))
	f.Fuzz(func(t *testing.T, size uint32, first, last uint8, flipAt uint32, flipXor uint8, cut uint32, mode uint8) {
		data := storetest.Pattern(int(size % (4*cs + 1)))
		tr := verified.TreeOf(data)
		fc, lc := int(first)%(tr.Count()+1), int(last)%(tr.Count()+1)
		if tr.Count() == 0 || fc > lc || lc >= tr.Count() {
			fc, lc = 0, tr.Count()-1
		}
		off, n := tr.Span(fc, lc)
		truth := data[off : off+n]
		stream, mustFail, lied := lie(truth, &tr, mode, int(flipAt), flipXor|1, int(cut))
		got, err := drain(verified.NewReader(bytes.NewReader(stream), tr, fc, lc), "next")
		if !bytes.HasPrefix(truth, got) {
			t.Fatalf("returned bytes that are not a prefix of the range")
		}
		if !lied && err != nil || mustFail && err == nil || err == nil && len(got) != len(truth) {
			t.Fatalf("lied=%v: %d of %d bytes, err %v", lied, len(got), len(truth), err)
		}
		if err != nil && !errors.Is(err, verified.ErrMismatch) && !errors.Is(err, verified.ErrShort) &&
			!errors.Is(err, verified.ErrLong) && !errors.Is(err, verified.ErrBadOutboard) && err != io.EOF {
			t.Fatalf("unexpected error kind %v", err)
		}
	})
}

// lie returns the stream a source sends for truth and changes tr as the
// source would (mode 4: a flipped outboard byte). lied says whether
// anything differs from the truth; mustFail whether the range's own bytes
// do (a flipped parent off the range's paths changes nothing it reads).
func lie(truth []byte, tr *verified.Tree, mode uint8, at int, xor uint8, cut int) (stream []byte, mustFail, lied bool) {
	stream = bytes.Clone(truth)
	switch mode % 5 {
	case 1: // one byte changed
		if len(stream) > 0 {
			stream[at%len(stream)] ^= xor
			return stream, true, true
		}
	case 2: // cut short
		if len(stream) > 0 {
			return stream[:cut%len(stream)], true, true
		}
	case 3: // extra bytes
		return append(stream, byte(cut)), true, true
	case 4: // one outboard byte changed (the header included)
		ob := bytes.Clone(tr.Outboard)
		ob[at%len(ob)] ^= xor
		tr.Outboard = ob
		return stream, false, true
	}
	return stream, false, false
}
