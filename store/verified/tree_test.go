package verified_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/bao"
	"github.com/ronhq/ron/store/storetest"
	"github.com/ronhq/ron/store/verified"
)

// Spec vectors (docs/storage.md §1).
const (
	vecID   = "b3:bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085" // 102,400 bytes of i mod 251
	emptyID = "b3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
	helloID = "b3:d74981efa70a0c880b8d8c1985d075dbcbf679b99a5f9914e5aaf96b831a9e24"
)

func TestTreeOfVectors(t *testing.T) {
	for _, tc := range []struct {
		data []byte
		id   string
	}{
		{nil, emptyID},
		{[]byte("hello world"), helloID},
		{[]byte("0123456789abcdef"), "b3:b8f6b168214bf501f5a4b84bff9e105cc5c1f3851b798dcb55ffe887391e84b0"},
		{storetest.Pattern(102400), vecID},
	} {
		tr := verified.TreeOf(tc.data)
		if tr.ID.String() != tc.id || tr.Size != int64(len(tc.data)) || int64(len(tr.Outboard)) != bao.OutboardSize(tr.Size) {
			t.Fatalf("%d bytes: id %s, size %d, %d-byte outboard", len(tc.data), tr.ID, tr.Size, len(tr.Outboard))
		}
		back, err := verified.ParseTree(tr.Outboard, tr.ID)
		if err != nil || back.Size != tr.Size || back.Count() != store.ChunkCount(tr.Size) {
			t.Fatalf("%d bytes: ParseTree %+v, %v", len(tc.data), back, err)
		}
	}
}

// outboardOf returns a syntactically shaped outboard stating size with
// parents zeroed: the parser checks the shape only.
func outboardOf(size int64) []byte {
	b := make([]byte, bao.OutboardSize(size))
	binary.LittleEndian.PutUint64(b, uint64(size))
	return b
}

func TestParseTreeMalformed(t *testing.T) {
	data := storetest.Pattern(3*cs + 5)
	good := verified.TreeOf(data)
	header := func(size uint64) []byte { return binary.LittleEndian.AppendUint64(nil, size) }
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, verified.ErrBadOutboard},
		{"header cut", good.Outboard[:7], verified.ErrBadOutboard},
		{"header only", good.Outboard[:8], verified.ErrBadOutboard},
		{"a parent short", good.Outboard[:len(good.Outboard)-64], verified.ErrBadOutboard},
		{"a byte short", good.Outboard[:len(good.Outboard)-1], verified.ErrBadOutboard},
		{"a byte more", append(bytes.Clone(good.Outboard), 0), verified.ErrBadOutboard},
		{"a parent more", append(bytes.Clone(good.Outboard), make([]byte, 64)...), verified.ErrBadOutboard},
		{"header states one group more", append(header(4*cs+5), good.Outboard[8:]...), verified.ErrBadOutboard},
		{"header past MaxSize", header(verified.MaxSize + 1), verified.ErrBadOutboard},
		{"header 2^64-1", header(1<<64 - 1), verified.ErrBadOutboard},
		{"header 2^63", header(1 << 63), verified.ErrBadOutboard},
		{"longer than MaxOutboardBytes", make([]byte, verified.MaxOutboardBytes+1), verified.ErrBadOutboard},
		{"size 0 for a non-empty id", header(0), verified.ErrMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := verified.ParseTree(tc.b, good.ID); !errors.Is(err, tc.want) {
				t.Fatalf("ParseTree: %v, want %v", err, tc.want)
			}
		})
	}
	// The largest object's outboard is accepted (its parents are checked
	// only when groups are read).
	if tr, err := verified.ParseTree(outboardOf(verified.MaxSize), good.ID); err != nil || tr.Size != verified.MaxSize {
		t.Fatalf("MaxSize: %v", err)
	}
	if int64(len(outboardOf(verified.MaxSize))) > verified.MaxOutboardBytes || bao.OutboardSize(verified.MaxSize+cs) <= verified.MaxOutboardBytes {
		t.Fatal("MaxSize is not the largest object whose outboard fits")
	}
}

func TestTreeHelpers(t *testing.T) {
	tr := verified.TreeOf(storetest.Pattern(3*cs + 1000)) // 4 groups
	if tr.Count() != 4 || tr.GroupLen(0) != cs || tr.GroupLen(3) != 1000 || tr.GroupLen(4) != 0 {
		t.Fatalf("Count %d, GroupLen %d %d %d", tr.Count(), tr.GroupLen(0), tr.GroupLen(3), tr.GroupLen(4))
	}
	for _, tc := range []struct {
		start, end  int64
		first, last int
	}{{0, 0, 0, 0}, {cs - 1, cs, 0, 1}, {cs, 2*cs - 1, 1, 1}, {3 * cs, 3*cs + 999, 3, 3},
		{5, 4, 0, -1}, {-1, 3, 0, -1}, {0, 3*cs + 1000, 0, -1}} {
		if f, l := tr.GroupRange(tc.start, tc.end); f != tc.first || l != tc.last {
			t.Errorf("GroupRange(%d, %d) = %d, %d", tc.start, tc.end, f, l)
		}
	}
	if off, n := tr.Span(1, 3); off != cs || n != 2*cs+1000 {
		t.Fatalf("Span(1, 3) = %d, %d", off, n)
	}
	if off, n := tr.Span(2, 4); off != 0 || n != 0 {
		t.Fatalf("Span(2, 4) = %d, %d", off, n)
	}
	if h := tr.RangeHeader(1, 1); h != "bytes=65536-131071" {
		t.Fatalf("RangeHeader(1, 1) = %q", h)
	}
	if h := tr.RangeHeader(3, 1); h != "" {
		t.Fatalf("RangeHeader(3, 1) = %q", h)
	}
	if !tr.Covers(0, 3) || tr.Covers(0, 2) || tr.Covers(1, 3) || !verified.TreeOf(nil).Covers(0, -1) {
		t.Fatal("Covers")
	}
}
