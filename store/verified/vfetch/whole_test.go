package vfetch

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/verified"
)

// TestWholeReader: chunks come out as read, the last only after the whole
// hash matched and the body ended; wrong, short and long bodies fail with
// store/verified's errors and never release the last chunk.
func TestWholeReader(t *testing.T) {
	data, id := pattern(2*cs + 10)
	_, emptyID := pattern(0)
	flipped := bytes.Clone(data)
	flipped[len(flipped)-1] ^= 1
	for _, row := range []struct {
		name   string
		body   []byte
		size   int64
		want   error
		chunks int // chunks released before the error (or EOF)
	}{
		{"exact", data, int64(len(data)), io.EOF, 3},
		{"empty", nil, 0, io.EOF, 0},
		{"wrong last byte", flipped, int64(len(data)), verified.ErrMismatch, 2},
		{"short", data[:len(data)-1], int64(len(data)), verified.ErrShort, 2},
		{"long", append(bytes.Clone(data), 0), int64(len(data)), verified.ErrLong, 2},
		{"wrong first chunk of one", data[:10], 10, verified.ErrMismatch, 0},
	} {
		t.Run(row.name, func(t *testing.T) {
			want := id
			if row.size == 0 {
				want = emptyID
			}
			r := NewWholeReader(bytes.NewReader(row.body), row.size, want)
			got, n, err := drain(r)
			if !errors.Is(err, row.want) {
				t.Fatalf("error %v, want %v", err, row.want)
			}
			if n != row.chunks || !bytes.Equal(got, row.body[:len(got)]) {
				t.Fatalf("released %d chunks (%d bytes), want %d", n, len(got), row.chunks)
			}
			if _, err := r.Next(); !errors.Is(err, row.want) {
				t.Fatalf("error not sticky: %v", err)
			}
		})
	}
}

// drain reads r to its first error (io.EOF at the end): the bytes and the
// number of chunks released.
func drain(r ChunkReader) ([]byte, int, error) {
	var got []byte
	for n := 0; ; n++ {
		c, err := r.Next()
		if err != nil {
			return got, n, err
		}
		got = append(got, c...)
	}
}

// FuzzWholeReader: whatever the body and the size claimed, the reader ends
// in io.EOF only when it released exactly the object's bytes.
func FuzzWholeReader(f *testing.F) {
	data, _ := pattern(cs + 100)
	f.Add(data, int64(len(data)), uint32(0))
	f.Add(data, int64(len(data)), uint32(7))
	f.Add(data[:cs], int64(len(data)), uint32(0))
	f.Add([]byte{}, int64(0), uint32(0))
	f.Fuzz(func(t *testing.T, body []byte, size int64, flip uint32) {
		if size < 0 || size > 4*cs {
			t.Skip()
		}
		want := body[:min(int64(len(body)), size)]
		id := store.Sum(want)
		if len(body) > 0 && flip != 0 {
			body = bytes.Clone(body)
			body[int(flip)%len(body)] ^= byte(flip>>8) | 1
		}
		got, _, err := drain(NewWholeReader(bytes.NewReader(body), size, id))
		if err == io.EOF && !bytes.Equal(got, want) || err == io.EOF && int64(len(got)) != size {
			t.Fatalf("EOF after %d bytes that are not the %d-byte object", len(got), size)
		}
	})
}
