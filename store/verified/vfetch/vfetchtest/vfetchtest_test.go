package vfetchtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/storetest"
	"github.com/ronhq/ron/store/verified"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// read verifies groups first..last of o's body (the span of those groups)
// against o's outboard: the bytes released and the reader's final error.
func read(o Object, first, last int) ([]byte, error) {
	t, err := verified.ParseTree(o.Outboard, o.ID)
	if err != nil {
		return nil, err
	}
	off, n := t.Span(first, last)
	var got bytes.Buffer
	_, err = verified.NewReader(bytes.NewReader(o.Data[off:off+n]), t, first, last).WriteTo(&got)
	return got.Bytes(), err
}

func TestObjects(t *testing.T) {
	data := storetest.Pattern(2*store.ChunkSize + 3)
	if got, err := read(Honest(data), 0, 2); err != nil || !bytes.Equal(got, data) || Honest(data).ID != store.Sum(data) {
		t.Fatalf("honest: %v, %d bytes", err, len(got))
	}
	if got, err := read(Corrupt(data, store.ChunkSize+1), 0, 2); !errors.Is(err, verified.ErrMismatch) || len(got) != store.ChunkSize {
		t.Fatalf("corrupt: %v after %d bytes", err, len(got))
	}
	if got, err := read(SelfConsistent(data, 5), 0, 2); !errors.Is(err, verified.ErrMismatch) || len(got) != 0 {
		t.Fatalf("self-consistent: %v after %d bytes", err, len(got))
	}
	if v1 := V1(data); v1.Outboard != nil || !bytes.Equal(v1.Data, data) {
		t.Fatal("V1 serves an outboard")
	}
}

// The table's Bad groups are exactly those that do not verify: every
// range reads what Delivers says, no more, no less.
func TestLiars(t *testing.T) {
	data := storetest.Pattern(5*store.ChunkSize + 1234)
	size := int64(len(data))
	for _, l := range Liars(data) {
		for _, r := range append(Ranges(size), Range{0, size - 1}) {
			tree := verified.TreeOf(data)
			first, last := tree.GroupRange(r.Start, r.End)
			off, _ := tree.Span(first, last)
			got, err := read(l.Object, first, last)
			got = got[min(int64(len(got)), r.Start-off):min(int64(len(got)), r.End+1-off)]
			want, complete := l.Delivers(data, r.Start, r.End)
			if complete != (err == nil) || !bytes.Equal(got, want) {
				t.Fatalf("%s, %s: %v, %d bytes; want %d bytes, complete %v", l.Name, r.Header(), err, len(got), len(want), complete)
			}
		}
	}
}

func TestPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data := storetest.Pattern(3 * store.ChunkSize)
		t0 := time.Now()
		got, err := io.ReadAll(&Paced{Ctx: t.Context(), Data: data, Pause: time.Second, StallAfter: len(data)})
		if err != nil || !bytes.Equal(got, data) || time.Since(t0) != 3*time.Second {
			t.Fatalf("%v, %d bytes after %v", err, len(got), time.Since(t0))
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		got, err = io.ReadAll(&Paced{Ctx: ctx, Data: data, StallAfter: 100})
		if !errors.Is(err, context.DeadlineExceeded) || len(got) != 100 || time.Since(t0) != 8*time.Second {
			t.Fatalf("stall: %v, %d bytes after %v", err, len(got), time.Since(t0))
		}
	})
}

// A size liar's outboard has a valid shape for the size it states; under
// it the groups before Bad verify against the true id and the stated last
// group never does. With the same group count only the last group fails;
// with one group more or less, the root's left subtree (four groups) still
// verifies.
func TestSizeLiars(t *testing.T) {
	data := storetest.Pattern(5*store.ChunkSize + 1234)
	wantBad := map[string]int{"a size a few bytes larger": 5, "a size a few bytes smaller": 5,
		"a size one group larger": 4, "a size one group smaller": 4}
	for _, l := range SizeLiars(data) {
		tr, err := verified.ParseTree(l.Outboard, l.ID)
		if err != nil || tr.Size != int64(len(l.Data)) || tr.Size == int64(len(data)) || l.ID != store.Sum(data) {
			t.Fatalf("%s: %v, size %d", l.Name, err, tr.Size)
		}
		if l.Bad != [2]int{wantBad[l.Name], 5} {
			t.Fatalf("%s: Bad %v", l.Name, l.Bad)
		}
		if got, err := read(l.Object, 0, l.Bad[0]-1); err != nil || !bytes.Equal(got, data[:l.Bad[0]*store.ChunkSize]) {
			t.Fatalf("%s: groups before %d: %v, %d bytes", l.Name, l.Bad[0], err, len(got))
		}
		last := tr.Count() - 1
		if _, err := read(l.Object, last, last); !errors.Is(err, verified.ErrMismatch) {
			t.Fatalf("%s: the stated last group: %v", l.Name, err)
		}
	}
}
