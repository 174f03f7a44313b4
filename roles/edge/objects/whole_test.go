package objects

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/ronhq/ron/store/verified"
)

// TestWholeReader: chunks come out as read, the last only after the whole
// hash matched and the body ended; wrong, short and long bodies fail with
// store/verified's errors and never release the last chunk.
func TestWholeReader(t *testing.T) {
	data, id := pattern(50, 2*cs+10)
	_, emptyID := pattern(0, 0)
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
			r := newWholeReader(bytes.NewReader(row.body), row.size, want)
			var got []byte
			n := 0
			for {
				c, err := r.Next()
				if err != nil {
					if !errors.Is(err, row.want) {
						t.Fatalf("error %v, want %v", err, row.want)
					}
					break
				}
				got = append(got, c...)
				n++
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
