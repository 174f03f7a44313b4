// Package storetest is the conformance suite every store.BlobStore engine
// passes, plus helpers shared by the store tests.
package storetest

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	lbao "lukechampine.com/blake3/bao"

	"github.com/ronhq/ron/internal/fixtures"
	"github.com/ronhq/ron/store"
)

// CorruptFunc flips the stored byte at offset off of object id in s (the
// engine's own test knows how).
type CorruptFunc func(t *testing.T, s store.BlobStore, id store.ID, off int64)

// Option configures Run.
type Option func(*config)

type config struct{ corrupt CorruptFunc }

// WithCorrupt enables the corruption-detection tests.
func WithCorrupt(f CorruptFunc) Option { return func(c *config) { c.corrupt = f } }

// Run runs the conformance suite. open must return a new, empty store; the
// suite closes it when each subtest ends.
func Run(t *testing.T, open func(t *testing.T) store.BlobStore, opts ...Option) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	tests := []struct {
		name string
		fn   func(*testing.T, store.BlobStore)
	}{
		{"Vectors", testVectors},
		{"RoundTripSizes", testRoundTripSizes},
		{"KnownSize", testKnownSize},
		{"OfficialVectors", testOfficialVectors},
		{"Existing", testExisting},
		{"ConcurrentSameID", testConcurrentSameID},
		{"HashMismatch", testHashMismatch},
		{"WantMatch", testWantMatch},
		{"MaxBytes", testMaxBytes},
		{"ContextCancel", testContextCancel},
		{"ReaderError", testReaderError},
		{"BadMeta", testBadMeta},
		{"Quarantine", testQuarantine},
		{"List", testList},
		{"Has", testHas},
		{"Delete", testDelete},
		{"ReadChunkArgs", testReadChunkArgs},
		{"ConcurrentReads", testConcurrentReads},
		{"Stats", testStats},
		{"FreeProbe", testFreeProbe},
		{"Closed", testClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
		})
	}
	t.Run("Corrupt", func(t *testing.T) {
		if c.corrupt == nil {
			t.Skip("engine test supplies no CorruptFunc")
		}
		s := open(t)
		t.Cleanup(func() { s.Close() })
		testCorrupt(t, s, c.corrupt)
	})
}

// Pattern returns n bytes with byte i = i mod 251 (the BLAKE3 test input).
func Pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

// MustID parses s or fails the test.
func MustID(t testing.TB, s string) store.ID {
	t.Helper()
	id, err := store.ParseID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Vector is one official BLAKE3 test vector: the unkeyed hash of
// Pattern(InputLen).
type Vector struct {
	InputLen int
	ID       store.ID
}

// OfficialVectors loads testdata/blake3/test_vectors.json (first 32 bytes
// of each unkeyed hash).
func OfficialVectors(t testing.TB) []Vector {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures.Dir(t), "blake3", "test_vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []struct {
			InputLen int    `json:"input_len"`
			Hash     string `json:"hash"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var out []Vector
	for _, c := range f.Cases {
		var id store.ID
		if n, err := hex.Decode(id[:], []byte(c.Hash[:64])); err != nil || n != 32 {
			t.Fatalf("bad vector hash %q: %v", c.Hash, err)
		}
		out = append(out, Vector{c.InputLen, id})
	}
	if len(out) == 0 {
		t.Fatal("no vectors")
	}
	return out
}

// ExpectedOutboard computes data's Bao outboard (group 6) with the library
// directly, independently of store.Ingest and store/bao.
func ExpectedOutboard(data []byte) []byte {
	ob, _ := lbao.EncodeBuf(data, 6, true)
	return ob
}

var bg = context.Background()

// put stores data and checks the returned Info.
func put(t *testing.T, s store.BlobStore, data []byte, meta store.Meta) (store.Info, bool) {
	t.Helper()
	info, created, err := s.Put(bg, bytes.NewReader(data), store.PutOptions{Meta: meta})
	if err != nil {
		t.Fatalf("Put(%d bytes): %v", len(data), err)
	}
	if info.ID != store.Sum(data) || info.Size != int64(len(data)) || info.Chunks != store.ChunkCount(int64(len(data))) {
		t.Fatalf("Put info = %+v, want id %s size %d", info, store.Sum(data), len(data))
	}
	return info, created
}

// ReadAll opens id and reads every chunk, verifying digests and Info.
func ReadAll(t testing.TB, s store.BlobStore, id store.ID) ([]byte, error) {
	t.Helper()
	o, err := s.Open(bg, id)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	info := o.Info()
	if ob := o.Outboard(); info.ID != id || ob != nil && ob.Size() != info.Size || info.Chunks != store.ChunkCount(info.Size) {
		t.Fatalf("object info %+v inconsistent with its outboard", info)
	}
	var out []byte
	buf := make([]byte, store.ChunkSize)
	for i := range info.Chunks {
		b, err := o.ReadChunk(i, buf)
		if err != nil {
			return out, err
		}
		out = append(out, b...)
	}
	return out, nil
}

// roundTrip stores data and checks every read path.
func roundTrip(t *testing.T, s store.BlobStore, data []byte, want store.ID) {
	t.Helper()
	info, created := put(t, s, data, store.Meta{ContentType: "application/x-test"})
	if !created || info.ID != want {
		t.Fatalf("created=%v id=%s, want true %s", created, info.ID, want)
	}
	st, err := s.Stat(bg, want)
	if err != nil || st.ID != want || st.Size != int64(len(data)) || st.ContentType != "application/x-test" || st.Created.IsZero() {
		t.Fatalf("Stat = %+v, %v", st, err)
	}
	o, err := s.Open(bg, want)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Outboard(); !bytes.Equal(got, ExpectedOutboard(data)) {
		t.Fatalf("outboard = %x, want %x", got, ExpectedOutboard(data))
	}
	o.Close()
	got, err := ReadAll(t, s, want)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(data))
	}
}

func testVectors(t *testing.T, s store.BlobStore) {
	p := Pattern(102400)
	vectors := []struct {
		name string
		data []byte
		id   string
	}{
		{"hello", []byte("hello world"), "b3:d74981efa70a0c880b8d8c1985d075dbcbf679b99a5f9914e5aaf96b831a9e24"},
		{"empty", nil, "b3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"},
		{"hex16", []byte("0123456789abcdef"), "b3:b8f6b168214bf501f5a4b84bff9e105cc5c1f3851b798dcb55ffe887391e84b0"},
		{"pattern102400", p, "b3:bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085"},
	}
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			roundTrip(t, s, v.data, MustID(t, v.id))
		})
	}
}

func testRoundTripSizes(t *testing.T, s store.BlobStore) {
	for _, n := range []int{0, 1, 65535, 65536, 65537, 3*65536 + 7, store.ReadSize + 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			data := Pattern(n)
			roundTrip(t, s, data, store.Sum(data))
		})
	}
}

// testKnownSize stores bodies whose length the caller states (hashed while
// received) and bodies whose stated length is wrong (hashed after): every
// one is stored under its own id with its own outboard.
func testKnownSize(t *testing.T, s store.BlobStore) {
	for i, n := range []int{1, 65536, 3*65536 + 7, store.ReadSize + 1} {
		for j, stated := range []int{n, n - 1, n + 1, 2 * n} {
			data := Pattern(n + 64*(4*i+j))[64*(4*i+j):] // a different body per case
			t.Run(fmt.Sprintf("%d bytes stated as %d", n, stated), func(t *testing.T) {
				info, created, err := s.Put(bg, bytes.NewReader(data), store.PutOptions{Size: int64(stated)})
				if err != nil || !created || info.ID != store.Sum(data) || info.Size != int64(n) {
					t.Fatalf("Put = %+v, %v, %v; want id %s", info, created, err, store.Sum(data))
				}
				o, err := s.Open(bg, info.ID)
				if err != nil {
					t.Fatal(err)
				}
				defer o.Close()
				if !bytes.Equal(o.Outboard(), ExpectedOutboard(data)) {
					t.Fatal("outboard is not the body's")
				}
			})
		}
	}
}

func testOfficialVectors(t *testing.T, s store.BlobStore) {
	for _, v := range OfficialVectors(t) {
		data := Pattern(v.InputLen)
		info, _ := put(t, s, data, store.Meta{})
		if info.ID != v.ID {
			t.Fatalf("len %d: id %s, want %s", v.InputLen, info.ID, v.ID)
		}
		if got, err := ReadAll(t, s, v.ID); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("len %d: read back: %v", v.InputLen, err)
		}
	}
}

func testExisting(t *testing.T, s store.BlobStore) {
	data := Pattern(70000)
	put(t, s, data, store.Meta{ContentType: "first/type"})
	info, created := put(t, s, data, store.Meta{ContentType: "second/type"})
	if created {
		t.Fatal("second Put created=true")
	}
	if st, _ := s.Stat(bg, info.ID); st.ContentType != "first/type" {
		t.Fatalf("content type = %q, want the first writer's", st.ContentType)
	}
}

func testConcurrentSameID(t *testing.T, s store.BlobStore) {
	data := Pattern(200_000)
	const n = 20
	var wg sync.WaitGroup
	results := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, results[i], errs[i] = s.Put(bg, bytes.NewReader(data), store.PutOptions{})
		})
	}
	wg.Wait()
	created := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("writer %d: %v", i, errs[i])
		}
		if results[i] {
			created++
		}
	}
	if created != 1 {
		t.Fatalf("%d writers saw created=true, want exactly 1", created)
	}
	if got, err := ReadAll(t, s, store.Sum(data)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %v", err)
	}
	assertIDs(t, s, store.Sum(data))
}

// assertIDs checks that List returns exactly ids.
func assertIDs(t *testing.T, s store.BlobStore, ids ...store.ID) {
	t.Helper()
	l, err := s.List(bg, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []store.ID
	for _, i := range l {
		got = append(got, i.ID)
	}
	slices.SortFunc(ids, func(a, b store.ID) int { return bytes.Compare(a[:], b[:]) })
	if !slices.Equal(got, ids) {
		t.Fatalf("List = %v, want %v", got, ids)
	}
}

// assertAbsent checks that id is not visible at all.
func assertAbsent(t *testing.T, s store.BlobStore, id store.ID) {
	t.Helper()
	if _, err := s.Stat(bg, id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Stat err = %v, want ErrNotFound", err)
	}
	if _, err := s.Open(bg, id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Open err = %v, want ErrNotFound", err)
	}
	if h, err := s.Has(bg, []store.ID{id}); err != nil || h[0] {
		t.Fatalf("Has = %v, %v", h, err)
	}
}

func testHashMismatch(t *testing.T, s store.BlobStore) {
	data := Pattern(100_000)
	want := store.Sum([]byte("something else"))
	_, _, err := s.Put(bg, bytes.NewReader(data), store.PutOptions{Want: &want})
	var hm *store.HashMismatchError
	if !errors.As(err, &hm) || hm.Expected != want || hm.Actual != store.Sum(data) {
		t.Fatalf("err = %v, want HashMismatchError", err)
	}
	assertAbsent(t, s, store.Sum(data))
	assertAbsent(t, s, want)
	assertIDs(t, s)
}

func testWantMatch(t *testing.T, s store.BlobStore) {
	data := []byte("hello world")
	want := store.Sum(data)
	info, created, err := s.Put(bg, bytes.NewReader(data), store.PutOptions{Want: &want})
	if err != nil || !created || info.ID != want {
		t.Fatalf("Put = %+v %v %v", info, created, err)
	}
}

// countingReader yields Pattern bytes forever and counts them.
type countingReader struct{ n int64 }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte((r.n + int64(i)) % 251)
	}
	r.n += int64(len(p))
	return len(p), nil
}

func testMaxBytes(t *testing.T, s store.BlobStore) {
	for _, max := range []int64{1, 100, store.ChunkSize, store.ReadSize, store.ReadSize + 5} {
		data := Pattern(int(max))
		if _, created, err := s.Put(bg, bytes.NewReader(data), store.PutOptions{MaxBytes: max}); err != nil || !created {
			t.Fatalf("exactly MaxBytes=%d: %v %v", max, created, err)
		}
		r := &countingReader{}
		_, _, err := s.Put(bg, r, store.PutOptions{MaxBytes: max})
		if !errors.Is(err, store.ErrTooLarge) {
			t.Fatalf("MaxBytes=%d: err = %v, want ErrTooLarge", max, err)
		}
		if r.n != max+1 {
			t.Fatalf("MaxBytes=%d: read %d bytes, want to stop at the crossing byte", max, r.n)
		}
	}
	_, _, err := s.Put(bg, bytes.NewReader(Pattern(101)), store.PutOptions{MaxBytes: 100})
	if !errors.Is(err, store.ErrTooLarge) {
		t.Fatalf("101 > 100: %v", err)
	}
	assertAbsent(t, s, store.Sum(Pattern(101)))
	if st := s.Stats(); st.Objects != 5 {
		t.Fatalf("Stats.Objects = %d, want 5", st.Objects)
	}
}

// cancelReader cancels its context after at bytes but keeps producing data
// up to total bytes.
type cancelReader struct {
	r      io.Reader
	at, n  int
	cancel func()
}

func (c *cancelReader) Read(p []byte) (int, error) {
	p = p[:min(len(p), 4096)]
	n, err := c.r.Read(p)
	c.n += n
	if c.n >= c.at {
		c.cancel()
	}
	return n, err
}

func testContextCancel(t *testing.T, s store.BlobStore) {
	for _, at := range []int{1, 200_000, 3 << 20} {
		data := Pattern(3<<20 + 1)
		ctx, cancel := context.WithCancel(bg)
		_, _, err := s.Put(ctx, &cancelReader{r: bytes.NewReader(data), at: at, cancel: cancel}, store.PutOptions{})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancel at %d: err = %v, want context.Canceled", at, err)
		}
		assertAbsent(t, s, store.Sum(data))
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, _, err := s.Put(ctx, bytes.NewReader(nil), store.PutOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before: %v", err)
	}
	assertIDs(t, s)
}

var errReader = errors.New("test reader failure")

type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errReader
	}
	k := min(len(p), r.n)
	r.n -= k
	return k, nil
}

func testReaderError(t *testing.T, s store.BlobStore) {
	for _, n := range []int{0, 10, 2 << 20} {
		_, _, err := s.Put(bg, &failingReader{n: n}, store.PutOptions{})
		if !errors.Is(err, errReader) {
			t.Fatalf("after %d bytes: err = %v, want the reader's error", n, err)
		}
	}
	assertIDs(t, s)
}

func testBadMeta(t *testing.T, s store.BlobStore) {
	for _, ct := range []string{string(bytes.Repeat([]byte("a"), 256)), "text/plain\n", "tëxt/plain"} {
		_, _, err := s.Put(bg, bytes.NewReader([]byte("x")), store.PutOptions{Meta: store.Meta{ContentType: ct}})
		if !errors.Is(err, store.ErrBadMeta) {
			t.Fatalf("content type %q: err = %v", ct, err)
		}
	}
	ct := string(bytes.Repeat([]byte("a"), 255))
	if _, _, err := s.Put(bg, bytes.NewReader([]byte("x")), store.PutOptions{Meta: store.Meta{ContentType: ct}}); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Stat(bg, store.Sum([]byte("x"))); st.ContentType != ct {
		t.Fatal("255-byte content type not kept")
	}
}

func testQuarantine(t *testing.T, s store.BlobStore) {
	a, b := Pattern(70_000), []byte("hello world")
	put(t, s, a, store.Meta{})
	put(t, s, b, store.Meta{})
	ida := store.Sum(a)
	if err := s.Quarantine(bg, ida, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(bg, ida); !errors.Is(err, store.ErrQuarantined) {
		t.Fatalf("Open = %v, want ErrQuarantined", err)
	}
	if _, err := s.Stat(bg, ida); !errors.Is(err, store.ErrQuarantined) {
		t.Fatalf("Stat = %v, want ErrQuarantined", err)
	}
	if h, _ := s.Has(bg, []store.ID{ida, store.Sum(b)}); h[0] || !h[1] {
		t.Fatalf("Has = %v", h)
	}
	assertIDs(t, s, store.Sum(b))
	if st := s.Stats(); st.Quarantined != 1 || st.Objects != 1 {
		t.Fatalf("Stats = %+v", st)
	}
	if err := s.Quarantine(bg, store.Sum([]byte("nope")), "test"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Quarantine absent = %v", err)
	}
	if err := s.Delete(bg, ida); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Delete quarantined = %v", err)
	}
	// A fresh copy (repair) makes it readable again.
	if _, created := put(t, s, a, store.Meta{}); !created {
		t.Fatal("re-put after quarantine: created=false")
	}
	if got, err := ReadAll(t, s, ida); err != nil || !bytes.Equal(got, a) {
		t.Fatalf("read after re-put: %v", err)
	}
}

func testList(t *testing.T, s store.BlobStore) {
	if l, err := s.List(bg, nil, 10); err != nil || len(l) != 0 {
		t.Fatalf("empty List = %v, %v", l, err)
	}
	var ids []store.ID
	sizes := map[store.ID]int64{}
	for i := range 40 {
		data := Pattern(i * 37)
		data = append(data, byte(i))
		info, _ := put(t, s, data, store.Meta{})
		ids = append(ids, info.ID)
		sizes[info.ID] = int64(len(data))
	}
	slices.SortFunc(ids, func(a, b store.ID) int { return bytes.Compare(a[:], b[:]) })
	all, err := s.List(bg, nil, 0)
	if err != nil || len(all) != len(ids) {
		t.Fatalf("List all: %d items, %v", len(all), err)
	}
	for i, info := range all {
		if info.ID != ids[i] || info.Size != sizes[info.ID] || info.Chunks != store.ChunkCount(info.Size) {
			t.Fatalf("item %d = %+v, want %s size %d", i, info, ids[i], sizes[ids[i]])
		}
	}
	var paged []store.ID
	var after *store.ID
	for {
		page, err := s.List(bg, after, 7)
		if err != nil || len(page) > 7 {
			t.Fatalf("page: %d items, %v", len(page), err)
		}
		for _, p := range page {
			paged = append(paged, p.ID)
		}
		if len(page) < 7 {
			break
		}
		last := page[len(page)-1].ID
		after = &last
	}
	if !slices.Equal(paged, ids) {
		t.Fatal("paged listing differs from the full one")
	}
	// after between ids, and after the last id.
	mid := ids[10]
	mid[31]++
	if page, _ := s.List(bg, &mid, 1); len(page) != 1 || page[0].ID != ids[11] {
		t.Fatalf("after a non-held id: %v", page)
	}
	if page, _ := s.List(bg, &ids[len(ids)-1], 5); len(page) != 0 {
		t.Fatalf("after the last: %v", page)
	}
}

func testHas(t *testing.T, s store.BlobStore) {
	a, b := []byte("a"), []byte("b")
	put(t, s, a, store.Meta{})
	got, err := s.Has(bg, []store.ID{store.Sum(b), store.Sum(a), store.Sum(a)})
	if err != nil || !slices.Equal(got, []bool{false, true, true}) {
		t.Fatalf("Has = %v, %v", got, err)
	}
	if got, err := s.Has(bg, nil); err != nil || len(got) != 0 {
		t.Fatalf("Has(nil) = %v, %v", got, err)
	}
}

func testDelete(t *testing.T, s store.BlobStore) {
	data := Pattern(150_000)
	id := store.Sum(data)
	put(t, s, data, store.Meta{})
	o, err := s.Open(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := s.Delete(bg, id); err != nil {
		t.Fatal(err)
	}
	assertAbsent(t, s, id)
	assertIDs(t, s)
	if err := s.Delete(bg, id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second Delete = %v", err)
	}
	// Streams already open finish.
	if b, err := o.ReadChunk(2, make([]byte, store.ChunkSize)); err != nil || !bytes.Equal(b, data[2*store.ChunkSize:]) {
		t.Fatalf("read after delete: %v", err)
	}
	if _, created := put(t, s, data, store.Meta{}); !created {
		t.Fatal("re-put after delete: created=false")
	}
}

func testReadChunkArgs(t *testing.T, s store.BlobStore) {
	data := Pattern(70_000)
	put(t, s, data, store.Meta{})
	o, err := s.Open(bg, store.Sum(data))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	for _, i := range []int{-1, 2, 100} {
		if _, err := o.ReadChunk(i, make([]byte, store.ChunkSize)); err == nil {
			t.Fatalf("chunk %d: no error", i)
		}
	}
	if _, err := o.ReadChunk(0, make([]byte, store.ChunkSize-1)); err == nil {
		t.Fatal("short buffer: no error")
	}
	if b, err := o.ReadChunk(1, make([]byte, 70_000-store.ChunkSize)); err != nil || !bytes.Equal(b, data[store.ChunkSize:]) {
		t.Fatalf("last chunk with exact buffer: %v", err)
	}
}

func testConcurrentReads(t *testing.T, s store.BlobStore) {
	data := Pattern(10*store.ChunkSize + 3)
	put(t, s, data, store.Meta{})
	o, err := s.Open(bg, store.Sum(data))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			buf := make([]byte, store.ChunkSize)
			for k := range 40 {
				i := (g + k) % o.Info().Chunks
				b, err := o.ReadChunk(i, buf)
				if err == nil && !bytes.Equal(b, data[i*store.ChunkSize:min((i+1)*store.ChunkSize, len(data))]) {
					err = fmt.Errorf("chunk %d differs", i)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func testStats(t *testing.T, s store.BlobStore) {
	put(t, s, Pattern(1000), store.Meta{})
	put(t, s, Pattern(2000), store.Meta{})
	put(t, s, Pattern(2000), store.Meta{})
	if st := s.Stats(); st.Objects != 2 || st.Bytes != 3000 || st.Quarantined != 0 {
		t.Fatalf("Stats = %+v", st)
	}
	if err := s.Delete(bg, store.Sum(Pattern(1000))); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Objects != 1 || st.Bytes != 2000 {
		t.Fatalf("Stats after delete = %+v", st)
	}
}

func testFreeProbe(t *testing.T, s store.BlobStore) {
	free, err := s.Free()
	if err != nil || free <= 0 {
		t.Fatalf("Free = %d, %v", free, err)
	}
	if err := s.Probe(bg); err != nil {
		t.Fatal(err)
	}
}

func testClosed(t *testing.T, s store.BlobStore) {
	put(t, s, []byte("x"), store.Meta{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Put(bg, bytes.NewReader([]byte("y")), store.PutOptions{}); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Put after Close = %v", err)
	}
	if _, err := s.Open(bg, store.Sum([]byte("x"))); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Open after Close = %v", err)
	}
}

func testCorrupt(t *testing.T, s store.BlobStore, corrupt CorruptFunc) {
	data := Pattern(3*store.ChunkSize - 100)
	id := store.Sum(data)
	other := []byte("hello world")
	put(t, s, data, store.Meta{})
	put(t, s, other, store.Meta{})
	o, err := s.Open(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	corrupt(t, s, id, store.ChunkSize+17)
	buf := make([]byte, store.ChunkSize)
	if _, err := o.ReadChunk(0, buf); err != nil {
		t.Fatalf("intact chunk 0: %v", err)
	}
	_, err = o.ReadChunk(1, buf)
	var ce *store.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, store.ErrCorrupt) || ce.ID != id || ce.Chunk != 1 || ce.Kind != store.KindData {
		t.Fatalf("corrupt chunk: err = %v", err)
	}
	if _, err := s.Open(bg, id); !errors.Is(err, store.ErrQuarantined) {
		t.Fatalf("Open after corruption = %v, want ErrQuarantined", err)
	}
	if h, _ := s.Has(bg, []store.ID{id}); h[0] {
		t.Fatal("corrupt object still held")
	}
	assertIDs(t, s, store.Sum(other))
	if st := s.Stats(); st.Quarantined != 1 {
		t.Fatalf("Stats = %+v", st)
	}
}

// SidecarV1 returns the v1 sidecar (chunk digests, no outboard) of data
// with content type ct, created at created: what a ron before the Bao
// outboard wrote, for upgrade tests.
func SidecarV1(data []byte, ct string, created time.Time) store.Sidecar {
	sc := store.Sidecar{Version: store.SidecarV1, Size: int64(len(data)), ChunkSize: store.ChunkSize,
		Created: time.UnixMilli(created.UnixMilli()), Digest: store.Sum(data), ContentType: ct, Chunks: []store.ID{}}
	for off := 0; off < len(data); off += store.ChunkSize {
		sc.Chunks = append(sc.Chunks, store.Sum(data[off:min(off+store.ChunkSize, len(data))]))
	}
	return sc
}
