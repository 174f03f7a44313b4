package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/storetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// flip corrupts the stored byte at off (internal access only).
func flip(t *testing.T, bs store.BlobStore, id store.ID, off int64) {
	s := bs.(*Store)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.objects[id]
	if !ok {
		t.Fatalf("flip: %s not held", id.Prefix())
	}
	e.chunks[off/store.ChunkSize][off%store.ChunkSize] ^= 0x40
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.BlobStore { return New(Options{}) }, storetest.WithCorrupt(flip))
}

func TestNoSpace(t *testing.T) {
	s := New(Options{MaxBytes: 1000})
	ctx := context.Background()
	if _, _, err := s.Put(ctx, bytes.NewReader(storetest.Pattern(600)), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if free, _ := s.Free(); free != 400 {
		t.Fatalf("Free = %d", free)
	}
	b := storetest.Pattern(601)
	if _, _, err := s.Put(ctx, bytes.NewReader(b), store.PutOptions{}); !errors.Is(err, store.ErrNoSpace) {
		t.Fatalf("err = %v, want ErrNoSpace", err)
	}
	if free, _ := s.Free(); free != 400 {
		t.Fatalf("Free after refusal = %d (reservation leaked)", free)
	}
	if err := s.Delete(ctx, store.Sum(storetest.Pattern(600))); err != nil {
		t.Fatal(err)
	}
	if _, created, err := s.Put(ctx, bytes.NewReader(b), store.PutOptions{}); err != nil || !created {
		t.Fatalf("after delete: %v %v", created, err)
	}
}

func TestCorruptHook(t *testing.T) {
	var got []int
	s := New(Options{OnCorrupt: func(id store.ID, chunk int, kind string) {
		if kind != store.KindData {
			t.Errorf("kind %q", kind)
		}
		got = append(got, chunk)
	}})
	data := storetest.Pattern(3 * store.ChunkSize)
	id := store.Sum(data)
	if _, _, err := s.Put(context.Background(), bytes.NewReader(data), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	o, _ := s.Open(context.Background(), id)
	flip(t, s, id, 2*store.ChunkSize)
	flip(t, s, id, 0)
	buf := make([]byte, store.ChunkSize)
	for i := range 3 {
		o.ReadChunk(i, buf)
	}
	if len(got) != 1 || got[0] != 0 {
		t.Fatalf("OnCorrupt calls = %v, want exactly one for chunk 0", got)
	}
	if free, _ := s.Free(); free != DefaultMaxBytes {
		t.Fatalf("quarantined bytes not freed: %d", free)
	}
}

func BenchmarkPut(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20, 64 << 20} {
		b.Run(sizeName(size), func(b *testing.B) {
			data := storetest.Pattern(size)
			b.SetBytes(int64(size))
			ctx := context.Background()
			for i := 0; b.Loop(); i++ {
				s := New(Options{})
				if _, _, err := s.Put(ctx, bytes.NewReader(data), store.PutOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}
