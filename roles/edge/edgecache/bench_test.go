package edgecache

import (
	"testing"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/store"
)

// BenchmarkObjectHit: Object + ReadAt of a 64 KiB object (+ Close).
func BenchmarkObjectHit(b *testing.B) {
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			c := benchCache(b, m)
			data := body(1, 64<<10)
			id := store.Sum(data)
			f, _ := c.NewFill(int64(len(data)))
			f.Write(data)
			if err := f.CommitObject(id, "application/octet-stream"); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				buf := make([]byte, len(data))
				for pb.Next() {
					blob, _, ok := c.Object(id)
					if !ok {
						b.Fatal("miss")
					}
					if n, err := blob.ReadAt(buf, 0); n != len(buf) || err != nil {
						b.Fatal(n, err)
					}
					blob.Close()
				}
			})
		})
	}
}

// BenchmarkFillCommit: a 256 KiB fill written in 32 KiB pieces and
// committed as an object (hash check, and on disk fsync + rename + meta.db).
func BenchmarkFillCommit(b *testing.B) {
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			c := benchCache(b, m)
			data := body(2, 256<<10)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				data[0], data[1], data[2] = byte(i), byte(i>>8), byte(i>>16)
				f, err := c.NewFill(int64(len(data)))
				if err != nil {
					b.Fatal(err)
				}
				for off := 0; off < len(data); off += 32 << 10 {
					f.Write(data[off : off+32<<10])
				}
				if err := f.CommitObject(store.Sum(data), "x"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchCache(b *testing.B, m mode) *Cache {
	opt := Options{MaxBytes: 256 << 20, Log: zerolog.Nop()}
	if m.disk {
		opt.Dir = b.TempDir()
	}
	c, err := Open(opt)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}
