package store_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/storetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const helloID = "b3:d74981efa70a0c880b8d8c1985d075dbcbf679b99a5f9914e5aaf96b831a9e24"

func TestParseID(t *testing.T) {
	valid := []string{helloID, "b3:" + strings.Repeat("0", 64), "b3:" + strings.Repeat("f", 64)}
	for _, s := range valid {
		id, err := store.ParseID(s)
		if err != nil || id.String() != s {
			t.Errorf("ParseID(%q) = %v, %v", s, id, err)
		}
	}
	h := helloID[3:]
	invalid := []string{
		"", "b3:", h, "B3:" + h, "b3:" + strings.ToUpper(h), "b3:" + h[:63], "b3:" + h + "0",
		" " + helloID, helloID + " ", "b3:" + h[:63] + "g", "b2:" + h, "b3:" + h[:62] + "0x", "b3-" + h,
		"b3:" + h[:63] + "\x00",
	}
	for _, s := range invalid {
		if _, err := store.ParseID(s); !errors.Is(err, store.ErrBadID) {
			t.Errorf("ParseID(%q) err = %v, want ErrBadID", s, err)
		}
	}
}

func TestIDForms(t *testing.T) {
	id := store.Sum([]byte("hello world"))
	if id.String() != helloID || id.Hex() != helloID[3:] || id.Prefix() != "d74981ef" {
		t.Fatalf("forms: %s %s %s", id, id.Hex(), id.Prefix())
	}
	for size, want := range map[int64]int{-1: 0, 0: 0, 1: 1, 65535: 1, 65536: 1, 65537: 2, 102400: 2} {
		if got := store.ChunkCount(size); got != want {
			t.Errorf("ChunkCount(%d) = %d, want %d", size, got, want)
		}
	}
	if store.ChunkLen(102400, 1) != 36864 || store.ChunkLen(102400, 2) != 0 || store.ChunkLen(102400, -1) != 0 {
		t.Fatal("ChunkLen")
	}
}

func FuzzParseID(f *testing.F) {
	for _, s := range []string{helloID, "", "b3:", "B3:" + helloID[3:], helloID + "0", helloID[3:]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := store.ParseID(s)
		if err != nil {
			if !errors.Is(err, store.ErrBadID) {
				t.Fatalf("error %v does not wrap ErrBadID", err)
			}
			return
		}
		if id.String() != s {
			t.Fatalf("round trip %q -> %q", s, id.String())
		}
	})
}

func TestHasherVectors(t *testing.T) {
	for _, v := range storetest.OfficialVectors(t) {
		data := storetest.Pattern(v.InputLen)
		for _, step := range []int{1, 7, 1000, 65536, len(data) + 1} {
			h := store.NewHasher()
			for off := 0; off < len(data); off += step {
				h.Write(data[off:min(off+step, len(data))])
			}
			id, chunks, n := h.Sum()
			if id != v.ID || n != int64(len(data)) || !equalIDs(chunks, storetest.ExpectedChunks(data)) {
				t.Fatalf("len %d step %d: id %s, want %s", v.InputLen, step, id, v.ID)
			}
		}
	}
	var zero store.Hasher
	if id, chunks, n := zero.Sum(); id.String() != "b3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262" || len(chunks) != 0 || n != 0 {
		t.Fatalf("empty: %s %d %d", id, len(chunks), n)
	}
}

func TestHasherSpecVector(t *testing.T) {
	h := store.NewHasher()
	h.Write(storetest.Pattern(102400))
	id, chunks, _ := h.Sum()
	want := []string{
		"b3:68d647e619a930e7b1082f74f334b0c65a315725569bdc123f0ee11881717bfe",
		"b3:1b314bec1682449387dbf17690bdd41311bdf21f3062998c1b89a631ac26dae2",
	}
	if id.String() != "b3:bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085" || len(chunks) != 2 ||
		chunks[0].String() != want[0] || chunks[1].String() != want[1] {
		t.Fatalf("id %s chunks %v", id, chunks)
	}
}

func equalIDs(a, b []store.ID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// slowReader returns at most n bytes per Read.
type slowReader struct {
	r io.Reader
	n int
}

func (s *slowReader) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.n)]) }

func TestIngest(t *testing.T) {
	for _, keep := range []bool{false, true} {
		for _, size := range []int{0, 1, 65536, store.ReadSize, store.ReadSize + 1, 3*store.ReadSize + 12345} {
			data := storetest.Pattern(size)
			var got []byte
			var segs []int
			in, err := store.Ingest(context.Background(), &slowReader{bytes.NewReader(data), 100_000},
				store.IngestOptions{Keep: keep}, func(b []byte) error {
					got = append(got, b...)
					segs = append(segs, len(b))
					return nil
				})
			if err != nil || in.ID != store.Sum(data) || in.Size != int64(size) || !bytes.Equal(got, data) ||
				!equalIDs(in.Chunks, storetest.ExpectedChunks(data)) {
				t.Fatalf("keep=%v size %d: %+v %v", keep, size, in.Size, err)
			}
			for i, n := range segs {
				if n > store.ReadSize || (i < len(segs)-1 && (n%store.ChunkSize != 0 || !keep && n != store.ReadSize)) {
					t.Fatalf("keep=%v size %d: segment sizes %v", keep, size, segs)
				}
			}
		}
	}
}

func TestIngestErrors(t *testing.T) {
	sinkErr := errors.New("sink")
	calls := 0
	_, err := store.Ingest(context.Background(), bytes.NewReader(storetest.Pattern(5<<20)), store.IngestOptions{},
		func([]byte) error {
			if calls++; calls == 2 {
				return sinkErr
			}
			return nil
		})
	if !errors.Is(err, sinkErr) {
		t.Fatalf("sink error: %v", err)
	}
	_, err = store.Ingest(context.Background(), bytes.NewReader(storetest.Pattern(5<<20)), store.IngestOptions{MaxBytes: 3 << 20},
		func([]byte) error { return nil })
	if !errors.Is(err, store.ErrTooLarge) {
		t.Fatalf("too large: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err = store.Ingest(ctx, bytes.NewReader(nil), store.IngestOptions{}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	goleak.VerifyNone(t)
}

func sampleSidecar(n int, ct string) store.Sidecar {
	data := storetest.Pattern(n)
	h := store.NewHasher()
	h.Write(data)
	id, chunks, size := h.Sum()
	return store.NewSidecar(id, size, chunks, store.Meta{ContentType: ct}, time.UnixMilli(1_700_000_000_123))
}

func TestSidecarRoundTrip(t *testing.T) {
	for _, sc := range []store.Sidecar{sampleSidecar(0, ""), sampleSidecar(102400, "text/plain; charset=utf-8"),
		sampleSidecar(65536, strings.Repeat("a", 255))} {
		b := store.EncodeSidecar(sc)
		if len(b) != 98+len(sc.ContentType)+32*len(sc.Chunks) {
			t.Fatalf("length %d", len(b))
		}
		got, err := store.DecodeSidecar(b, sc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		if got.Size != sc.Size || got.ChunkSize != store.ChunkSize || !got.Created.Equal(sc.Created) ||
			got.ContentType != sc.ContentType || !equalIDs(got.Chunks, sc.Chunks) || got.Digest != sc.Digest {
			t.Fatalf("round trip: %+v != %+v", got, sc)
		}
		if !bytes.Equal(store.EncodeSidecar(got), b) {
			t.Fatal("re-encoding differs")
		}
	}
}

// retrail recomputes the trailer after a field was edited.
func retrail(b []byte) []byte {
	sum := store.Sum(b[:len(b)-32])
	copy(b[len(b)-32:], sum[:])
	return b
}

func TestDecodeSidecarInvalid(t *testing.T) {
	sc := sampleSidecar(102400, "text/plain")
	good := store.EncodeSidecar(sc)
	le := binary.LittleEndian
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := map[string][]byte{
		"empty":            nil,
		"short":            good[:97],
		"magic":            edit(func(b []byte) []byte { b[0] = 'X'; return retrail(b) }),
		"version0":         edit(func(b []byte) []byte { le.PutUint16(b[4:], 0); return retrail(b) }),
		"version2":         edit(func(b []byte) []byte { le.PutUint16(b[4:], 2); return retrail(b) }),
		"flags":            edit(func(b []byte) []byte { le.PutUint16(b[6:], 1); return retrail(b) }),
		"size one chunk":   edit(func(b []byte) []byte { le.PutUint64(b[8:], 65536); return retrail(b) }),
		"size chunk count": edit(func(b []byte) []byte { le.PutUint64(b[8:], 200000); return retrail(b) }),
		"size huge":        edit(func(b []byte) []byte { le.PutUint64(b[8:], 1<<63); return retrail(b) }),
		"chunk size":       edit(func(b []byte) []byte { le.PutUint32(b[16:], 4096); return retrail(b) }),
		"chunk count":      edit(func(b []byte) []byte { le.PutUint32(b[20:], 3); return retrail(b) }),
		"digest":           edit(func(b []byte) []byte { b[40] ^= 1; return retrail(b) }),
		"ct length long":   edit(func(b []byte) []byte { le.PutUint16(b[64:], 11); return retrail(b) }),
		"ct length short":  edit(func(b []byte) []byte { le.PutUint16(b[64:], 9); return retrail(b) }),
		"ct length 256":    edit(func(b []byte) []byte { le.PutUint16(b[64:], 256); return retrail(b) }),
		"ct non-ascii":     edit(func(b []byte) []byte { b[66] = 0xc3; return retrail(b) }),
		"ct control":       edit(func(b []byte) []byte { b[66] = '\n'; return retrail(b) }),
		"trailer":          edit(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }),
		"chunk digest":     edit(func(b []byte) []byte { b[80] ^= 1; return b }),
		"truncated":        good[:len(good)-1],
		"extra byte":       retrail(append(bytes.Clone(good), 0)),
	}
	for name, b := range cases {
		if _, err := store.DecodeSidecar(b, sc.Digest); !errors.Is(err, store.ErrBadSidecar) {
			t.Errorf("%s: err = %v, want ErrBadSidecar", name, err)
		}
	}
	if _, err := store.DecodeSidecar(good, store.Sum([]byte("other"))); !errors.Is(err, store.ErrBadSidecar) {
		t.Error("digest != want accepted")
	}
}

func FuzzDecodeSidecar(f *testing.F) {
	for _, sc := range []store.Sidecar{sampleSidecar(0, ""), sampleSidecar(11, "text/plain"), sampleSidecar(102400, "a/b")} {
		f.Add(store.EncodeSidecar(sc), sc.Digest[:])
	}
	f.Add([]byte("RONS"), make([]byte, 32))
	f.Fuzz(func(t *testing.T, b []byte, want []byte) {
		if len(want) != 32 {
			return
		}
		id := store.ID(want)
		sc, err := store.DecodeSidecar(b, id)
		if err != nil {
			return
		}
		if !bytes.Equal(store.EncodeSidecar(sc), b) {
			t.Fatal("valid sidecar does not re-encode identically")
		}
	})
}

func BenchmarkHasher(b *testing.B) {
	data := storetest.Pattern(64 << 20)
	b.Run("Hasher64MiB", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			h := store.NewHasher()
			for off := 0; off < len(data); off += store.ReadSize {
				h.Write(data[off : off+store.ReadSize])
			}
			h.Sum()
		}
	})
	b.Run("Ingest64MiB", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := store.Ingest(context.Background(), bytes.NewReader(data), store.IngestOptions{}, func([]byte) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Sum64MiB", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			store.Sum(data)
		}
	})
}
