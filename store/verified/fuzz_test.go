package verified_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/storetest"
	"github.com/ronhq/ron/store/verified"
)

// FuzzParseList: ParseList never panics; what it accepts is consistent and
// survives a round trip through AppendJSON; everything it refuses wraps
// ErrBadList.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{
		vecList,
		string(verified.ListOf(nil).AppendJSON(nil)),
		string(verified.ListOf([]byte("hello world")).AppendJSON(nil)),
		`{"id":"` + vecID + `","size":102400,"chunk_size":65536,"chunks":[],"chunks":[]}`,
		`{"id":"` + vecID + `","size":-1}`,
		`{}`, `[]`, `null`, `{"a":1}x`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	vid := storetest.MustID(f, vecID)
	f.Fuzz(func(t *testing.T, b []byte, wantVector bool) {
		want := vid
		if !wantVector {
			// Accept whatever id the document names, to reach the deeper checks.
			want = idFrom(b)
		}
		l, err := verified.ParseList(b, want)
		if err != nil {
			if !errors.Is(err, verified.ErrBadList) {
				t.Fatalf("error %v does not wrap ErrBadList", err)
			}
			return
		}
		if l.ID != want || l.Size < 0 || l.ChunkSize != store.ChunkSize || l.Count() != store.ChunkCount(l.Size) {
			t.Fatalf("inconsistent list accepted: %+v", l)
		}
		back, err := verified.ParseList(l.AppendJSON(nil), want)
		if err != nil || back.Size != l.Size || len(back.Chunks) != len(l.Chunks) {
			t.Fatalf("round trip: %+v, %v", back, err)
		}
		for i := range back.Chunks {
			if back.Chunks[i] != l.Chunks[i] {
				t.Fatalf("round trip chunk %d differs", i)
			}
		}
	})
}

// idFrom returns the id named after the first `"id":"` in b, or the zero id.
func idFrom(b []byte) store.ID {
	_, rest, ok := bytes.Cut(b, []byte(`"id":"`))
	if !ok || len(rest) < 67 {
		return store.ID{}
	}
	id, _ := store.ParseID(string(rest[:67]))
	return id
}

// FuzzReader: whatever the stream holds, the Reader only ever returns a
// prefix of the true bytes of the requested range, and returns all of them
// with a clean EOF exactly when the stream is the true range.
func FuzzReader(f *testing.F) {
	f.Add(uint32(2*cs+100), uint8(0), uint8(2), true, uint32(cs+1), uint8(1), uint32(0), uint8(0))
	f.Add(uint32(10), uint8(0), uint8(0), true, uint32(0), uint8(0), uint32(0), uint8(1))
	f.Add(uint32(3*cs), uint8(1), uint8(2), false, uint32(5), uint8(255), uint32(7), uint8(2))
	f.Add(uint32(0), uint8(0), uint8(0), true, uint32(0), uint8(0), uint32(0), uint8(0))
	f.Fuzz(func(t *testing.T, size uint32, first, last uint8, whole bool, flipAt uint32, flipXor uint8, cut uint32, mode uint8) {
		data := storetest.Pattern(int(size % (4*cs + 1)))
		l := verified.ListOf(data)
		fc, lc := int(first)%(l.Count()+1), int(last)%(l.Count()+1)
		if l.Count() == 0 || fc > lc || lc >= l.Count() {
			fc, lc = 0, l.Count()-1
		}
		off, n := l.Span(fc, lc)
		truth := data[off : off+n]
		stream := bytes.Clone(truth)
		switch mode % 4 {
		case 1: // one byte changed
			if len(stream) > 0 {
				stream[int(flipAt)%len(stream)] ^= flipXor | 1
			}
		case 2: // cut short
			if len(stream) > 0 {
				stream = stream[:int(cut)%len(stream)]
			}
		case 3: // extra bytes
			stream = append(stream, byte(cut))
		}
		got, err := drain(verified.NewReader(bytes.NewReader(stream), l, fc, lc, whole), "next")
		if !bytes.HasPrefix(truth, got) {
			t.Fatalf("returned bytes that are not a prefix of the range")
		}
		clean := bytes.Equal(stream, truth)
		if clean != (err == nil) || err == nil && len(got) != len(truth) {
			t.Fatalf("stream clean=%v: %d of %d bytes, err %v", clean, len(got), len(truth), err)
		}
		if err != nil && len(got) == len(truth) && len(truth) > 0 {
			t.Fatalf("the whole range was released before failing: %v", err)
		}
		if err != nil && !errors.Is(err, verified.ErrMismatch) && !errors.Is(err, verified.ErrShort) &&
			!errors.Is(err, verified.ErrLong) && err != io.EOF {
			t.Fatalf("unexpected error kind %v", err)
		}
	})
}
