package store_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/bao"
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

// slowReader returns at most n bytes per Read.
type slowReader struct {
	r io.Reader
	n int
}

func (s *slowReader) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.n)]) }

func TestIngest(t *testing.T) {
	for _, keep := range []bool{false, true} {
		for _, size := range []int{0, 1, 65536, store.ReadSize, store.ReadSize + 1, 3*store.ReadSize + 12345} {
			for _, stated := range []int{size, 0, size + 1, max(size-1, 0)} {
				testIngest(t, keep, size, stated)
			}
		}
	}
}

// testIngest ingests size bytes stated as stated (0 unknown): the sink gets
// every byte in ChunkSize-aligned segments; the id and outboard are set by
// Ingest exactly when the statement was right, else by Finish.
func testIngest(t *testing.T, keep bool, size, stated int) {
	data := storetest.Pattern(size)
	var got []byte
	var segs []int
	in, err := store.Ingest(context.Background(), &slowReader{bytes.NewReader(data), 100_000},
		store.IngestOptions{Keep: keep, Size: int64(stated)}, func(b []byte) error {
			got = append(got, b...)
			segs = append(segs, len(b))
			return nil
		})
	if err != nil || in.Size != int64(size) || !bytes.Equal(got, data) {
		t.Fatalf("keep=%v size %d: %+v %v", keep, size, in.Size, err)
	}
	if in.Hashed() != (stated == size && size > 0) {
		t.Fatalf("keep=%v size %d stated %d: hashed while reading = %v", keep, size, stated, in.Hashed())
	}
	if err := in.Finish(bytes.NewReader(got)); err != nil || in.ID != store.Sum(data) ||
		!bytes.Equal(in.Outboard, storetest.ExpectedOutboard(data)) {
		t.Fatalf("keep=%v size %d stated %d: id %s (%v), want %s, or outboard wrong", keep, size, stated, in.ID, err, store.Sum(data))
	}
	for i, n := range segs {
		if n > store.ReadSize || (i < len(segs)-1 && (n%store.ChunkSize != 0 || !keep && n != store.ReadSize)) {
			t.Fatalf("keep=%v size %d: segment sizes %v", keep, size, segs)
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
	for _, stated := range []int64{0, 5 << 20} {
		_, err = store.Ingest(context.Background(), bytes.NewReader(storetest.Pattern(5<<20)), store.IngestOptions{MaxBytes: 3 << 20, Size: stated},
			func([]byte) error { return nil })
		if !errors.Is(err, store.ErrTooLarge) {
			t.Fatalf("too large, stated %d: %v", stated, err)
		}
	}
	calls = 0
	_, err = store.Ingest(context.Background(), bytes.NewReader(storetest.Pattern(5<<20)), store.IngestOptions{Size: 5 << 20},
		func([]byte) error {
			if calls++; calls == 3 {
				return sinkErr
			}
			return nil
		})
	if !errors.Is(err, sinkErr) {
		t.Fatalf("sink error while hashing: %v", err)
	}
	var in store.Ingested
	in.Size = 10
	if err := in.Finish(bytes.NewReader(make([]byte, 9))); err == nil {
		t.Fatal("Finish of a short stored body succeeded")
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
	ob, id, err := bao.Encode(bytes.NewReader(data), int64(n))
	if err != nil {
		panic(err)
	}
	return store.NewSidecar(id, int64(n), ob, store.Meta{ContentType: ct}, time.UnixMilli(1_700_000_000_123))
}

// sampleSidecarV1 is sampleSidecar in the v1 layout, chunk digests in
// place of the outboard.
func sampleSidecarV1(n int, ct string) store.Sidecar {
	return storetest.SidecarV1(storetest.Pattern(n), ct, time.UnixMilli(1_700_000_000_123))
}

func TestSidecarRoundTrip(t *testing.T) {
	for _, sc := range []store.Sidecar{sampleSidecar(0, ""), sampleSidecar(102400, "text/plain; charset=utf-8"),
		sampleSidecar(65536, strings.Repeat("a", 255)), sampleSidecar(5*65536+1, "a/b"),
		sampleSidecarV1(0, ""), sampleSidecarV1(102400, "text/plain"), sampleSidecarV1(65536, "")} {
		b := store.EncodeSidecar(sc)
		tree := int(bao.OutboardSize(sc.Size))
		if sc.Version == store.SidecarV1 {
			tree = 32 * store.ChunkCount(sc.Size)
		}
		if len(b) != 98+len(sc.ContentType)+tree || store.SidecarVersion(b) != sc.Version {
			t.Fatalf("v%d: length %d, version %d", sc.Version, len(b), store.SidecarVersion(b))
		}
		got, err := store.DecodeSidecar(b, sc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != sc.Version || got.Size != sc.Size || got.ChunkSize != store.ChunkSize || !got.Created.Equal(sc.Created) ||
			got.ContentType != sc.ContentType || !slices.Equal(got.Chunks, sc.Chunks) || !bytes.Equal(got.Outboard, sc.Outboard) ||
			got.Digest != sc.Digest {
			t.Fatalf("round trip: %+v != %+v", got, sc)
		}
		if !bytes.Equal(store.EncodeSidecar(got), b) {
			t.Fatal("re-encoding differs")
		}
	}
}

// TestSidecarUpgraded: a v1 sidecar's v2 form keeps its metadata and
// proves every chunk through the outboard; CheckChunk checks either form.
func TestSidecarUpgraded(t *testing.T) {
	data := storetest.Pattern(3*65536 + 5)
	v1 := sampleSidecarV1(len(data), "text/x")
	v2 := v1.Upgraded(sampleSidecar(len(data), "").Outboard)
	if v2.Version != store.SidecarV2 || v2.ContentType != "text/x" || !v2.Created.Equal(v1.Created) || v2.Digest != v1.Digest {
		t.Fatalf("upgraded: %+v", v2)
	}
	for _, sc := range []store.Sidecar{v1, v2} {
		for i := range store.ChunkCount(int64(len(data))) {
			chunk := bytes.Clone(data[i*store.ChunkSize : min((i+1)*store.ChunkSize, len(data))])
			if err := sc.CheckChunk(i, chunk); err != nil {
				t.Fatalf("v%d chunk %d: %v", sc.Version, i, err)
			}
			chunk[len(chunk)-1] ^= 1
			var ce *store.CorruptError
			if err := sc.CheckChunk(i, chunk); !errors.As(err, &ce) || ce.Chunk != i || ce.Kind != store.KindData {
				t.Fatalf("v%d chunk %d flipped: %v", sc.Version, i, err)
			}
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
	for _, sc := range []store.Sidecar{sampleSidecar(102400, "text/plain"), sampleSidecarV1(102400, "text/plain")} {
		t.Run(fmt.Sprintf("v%d", sc.Version), func(t *testing.T) { testDecodeSidecarInvalid(t, sc) })
	}
}

func testDecodeSidecarInvalid(t *testing.T, sc store.Sidecar) {
	good := store.EncodeSidecar(sc)
	le := binary.LittleEndian
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := map[string][]byte{
		"empty":            nil,
		"short":            good[:97],
		"magic":            edit(func(b []byte) []byte { b[0] = 'X'; return retrail(b) }),
		"version0":         edit(func(b []byte) []byte { le.PutUint16(b[4:], 0); return retrail(b) }),
		"version3":         edit(func(b []byte) []byte { le.PutUint16(b[4:], 3); return retrail(b) }),
		"other version":    edit(func(b []byte) []byte { le.PutUint16(b[4:], uint16(3-sc.Version)); return retrail(b) }),
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
		"tree byte":        edit(func(b []byte) []byte { b[90] ^= 1; return b }),
		"truncated":        good[:len(good)-1],
		"extra byte":       retrail(append(bytes.Clone(good), 0)),
	}
	if sc.Version == store.SidecarV2 {
		cases["outboard header"] = edit(func(b []byte) []byte { b[66+10] ^= 1; return retrail(b) })
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
	for _, sc := range []store.Sidecar{sampleSidecar(0, ""), sampleSidecar(11, "text/plain"), sampleSidecar(102400, "a/b"),
		sampleSidecar(3*65536+9, ""), sampleSidecarV1(11, "text/plain"), sampleSidecarV1(102400, "a/b")} {
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

func BenchmarkIngest(b *testing.B) {
	data := storetest.Pattern(64 << 20)
	b.Run("Ingest64MiB/size-known", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := store.Ingest(context.Background(), bytes.NewReader(data), store.IngestOptions{Size: int64(len(data))}, func([]byte) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Ingest64MiB/size-unknown-then-Finish", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			in, err := store.Ingest(context.Background(), bytes.NewReader(data), store.IngestOptions{}, func([]byte) error { return nil })
			if err == nil {
				err = in.Finish(bytes.NewReader(data))
			}
			if err != nil {
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
