package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/storetest"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) {
	unix.Umask(0o022)
	goleak.VerifyTestMain(m)
}

var bg = context.Background()

func open(t *testing.T, dir string, opt Options) *Store {
	t.Helper()
	s, err := Open(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// flip corrupts the byte at off of id's data file in place.
func flip(t *testing.T, bs store.BlobStore, id store.ID, off int64) {
	f, err := os.OpenFile(bs.(*Store).dataPath(id), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x40
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.BlobStore { return open(t, t.TempDir(), Options{}) }, storetest.WithCorrupt(flip))
}

func put(t *testing.T, s *Store, data []byte, ct string) store.Info {
	t.Helper()
	info, _, err := s.Put(bg, bytes.NewReader(data), store.PutOptions{Meta: store.Meta{ContentType: ct}})
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func assertTmpEmpty(t *testing.T, s *Store) {
	t.Helper()
	ents, err := os.ReadDir(s.tmpDir)
	if err != nil || len(ents) != 0 {
		t.Fatalf("tmp holds %d entries (%v)", len(ents), err)
	}
}

func TestCrashPoints(t *testing.T) {
	data := storetest.Pattern(150_000)
	id := store.Sum(data)
	for _, tc := range []struct {
		step    string
		visible bool
	}{
		{stepTempSynced, false},
		{stepSidecarRenamed, false},
		{stepDataRenamed, true},
		{stepBeforeDirSync, true},
	} {
		t.Run(tc.step, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, Options{})
			crash := errors.New("crash")
			s.failpoint = func(step string) error {
				if step == tc.step {
					return crash
				}
				return nil
			}
			if _, _, err := s.Put(bg, bytes.NewReader(data), store.PutOptions{Meta: store.Meta{ContentType: "a/b"}}); !errors.Is(err, crash) {
				t.Fatalf("Put = %v, want simulated crash", err)
			}
			s.Close()
			s = open(t, dir, Options{})
			assertTmpEmpty(t, s)
			got, err := storetest.ReadAll(t, s, id)
			if !tc.visible {
				if !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("partial object visible: %v", err)
				}
				if l, _ := s.List(bg, nil, 0); len(l) != 0 {
					t.Fatalf("List = %v", l)
				}
				if h, _ := s.Has(bg, []store.ID{id}); h[0] {
					t.Fatal("Has = true")
				}
				_, serr := os.Stat(s.metaPath(id))
				if orphan := serr == nil; orphan != (tc.step == stepSidecarRenamed) {
					t.Fatalf("orphan sidecar present = %v", orphan)
				}
				// The orphan is harmless: a new Put succeeds and wins.
				if _, created, err := s.Put(bg, bytes.NewReader(data), store.PutOptions{}); err != nil || !created {
					t.Fatalf("Put after crash: %v %v", created, err)
				}
				got, err = storetest.ReadAll(t, s, id)
			}
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read after reopen: %v", err)
			}
			if info, err := s.Stat(bg, id); err != nil || info.Size != int64(len(data)) {
				t.Fatalf("Stat = %+v, %v", info, err)
			}
		})
	}
}

func TestLayoutAndModes(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	info := put(t, s, []byte("hello world"), "text/plain")
	h := info.ID.Hex()
	for p, mode := range map[string]os.FileMode{
		filepath.Join(dir, "objects", h[:2], h[2:4], h):         0o640,
		filepath.Join(dir, "objects", h[:2], h[2:4], h+".meta"): 0o640,
		filepath.Join(dir, "objects", h[:2], h[2:4]):            os.ModeDir | 0o750,
		filepath.Join(dir, "objects", h[:2]):                    os.ModeDir | 0o750,
		filepath.Join(dir, "tmp"):                               os.ModeDir | 0o750,
		filepath.Join(dir, "quarantine"):                        os.ModeDir | 0o750,
	} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode() != mode {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode(), err, mode)
		}
	}
	b, _ := os.ReadFile(s.metaPath(info.ID))
	sc, err := store.DecodeSidecar(b, info.ID)
	if err != nil || sc.ContentType != "text/plain" || sc.Size != 11 || sc.Version != store.SidecarV2 || sc.Outboard.Size() != 11 {
		t.Fatalf("sidecar = %+v, %v", sc, err)
	}
	assertTmpEmpty(t, s)
}

func TestTmpEmptiedAtOpen(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	os.WriteFile(filepath.Join(s.tmpDir, "junk.part"), []byte("x"), 0o640)
	os.Mkdir(filepath.Join(s.tmpDir, "d"), 0o750)
	s.Close()
	assertTmpEmpty(t, open(t, dir, Options{}))
}

func TestSidecarRebuild(t *testing.T) {
	for name, damage := range map[string]func(string) error{
		"missing": os.Remove,
		"trailer": func(p string) error {
			b, _ := os.ReadFile(p)
			b[len(b)-1] ^= 1
			return os.WriteFile(p, b, 0o640)
		},
		"truncated": func(p string) error { return os.Truncate(p, 50) },
		"garbage":   func(p string) error { return os.WriteFile(p, []byte("not a sidecar"), 0o640) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, Options{})
			data := storetest.Pattern(200_000)
			info := put(t, s, data, "x/y")
			s.Close()
			if err := damage(s.metaPath(info.ID)); err != nil {
				t.Fatal(err)
			}
			var rebuilt atomic.Int32
			s = open(t, dir, Options{OnSidecarRebuilt: func(id store.ID) { rebuilt.Add(1) }})
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					if got, err := storetest.ReadAll(t, s, info.ID); err != nil || !bytes.Equal(got, data) {
						t.Errorf("read: %v", err)
					}
				})
			}
			wg.Wait()
			if n := rebuilt.Load(); n < 1 {
				t.Fatal("OnSidecarRebuilt not called")
			}
			b, _ := os.ReadFile(s.metaPath(info.ID))
			if sc, err := store.DecodeSidecar(b, info.ID); err != nil || sc.Size != 200_000 {
				t.Fatalf("rebuilt sidecar: %v", err)
			}
			assertTmpEmpty(t, s)
		})
	}
}

func TestRebuildQuarantinesBadData(t *testing.T) {
	dir := t.TempDir()
	var calls []int
	s := open(t, dir, Options{OnCorrupt: func(id store.ID, chunk int, kind string) { calls = append(calls, chunk) }})
	data := storetest.Pattern(100_000)
	info := put(t, s, data, "")
	s.cache.purge()
	// Truncate the data: the sidecar's size no longer matches, the rebuild hashes the data.
	if err := os.Truncate(s.dataPath(info.ID), 1000); err != nil {
		t.Fatal(err)
	}
	_, err := s.Open(bg, info.ID)
	var ce *store.CorruptError
	if !errors.As(err, &ce) || ce.Chunk != -1 {
		t.Fatalf("Open = %v, want CorruptError chunk -1", err)
	}
	if _, err := s.Stat(bg, info.ID); !errors.Is(err, store.ErrQuarantined) {
		t.Fatalf("Stat = %v", err)
	}
	if len(calls) != 1 || calls[0] != -1 {
		t.Fatalf("OnCorrupt calls = %v", calls)
	}
	ents, _ := os.ReadDir(s.qDir)
	if len(ents) != 2 {
		t.Fatalf("quarantine holds %d files, want data and sidecar", len(ents))
	}
	s.Close()
	s = open(t, dir, Options{})
	if _, err := s.Stat(bg, info.ID); !errors.Is(err, store.ErrQuarantined) {
		t.Fatalf("Stat after reopen = %v", err)
	}
	if st := s.Stats(); st.Quarantined != 1 {
		t.Fatalf("Stats after reopen = %+v", st)
	}
}

func TestCorruptChunkHookAndTruncation(t *testing.T) {
	var calls []int
	s := open(t, t.TempDir(), Options{OnCorrupt: func(id store.ID, chunk int, kind string) { calls = append(calls, chunk) }})
	data := storetest.Pattern(3 * store.ChunkSize)
	info := put(t, s, data, "")
	o, err := s.Open(bg, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := os.Truncate(s.dataPath(info.ID), 2*store.ChunkSize+5); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, store.ChunkSize)
	if _, err := o.ReadChunk(2, buf); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("short chunk: %v", err)
	}
	if _, err := o.ReadChunk(2, buf); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("short chunk again: %v", err)
	}
	if len(calls) != 1 || calls[0] != 2 {
		t.Fatalf("OnCorrupt calls = %v, want one for chunk 2", calls)
	}
}

func TestStaleHandleDoesNotQuarantineNewCopy(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	data := storetest.Pattern(100_000)
	info := put(t, s, data, "")
	o, _ := s.Open(bg, info.ID)
	defer o.Close()
	flip(t, s, info.ID, 10)
	if err := s.Delete(bg, info.ID); err != nil {
		t.Fatal(err)
	}
	put(t, s, data, "")
	if _, err := o.ReadChunk(0, make([]byte, store.ChunkSize)); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("stale read: %v", err)
	}
	if _, err := storetest.ReadAll(t, s, info.ID); err != nil {
		t.Fatalf("new copy: %v", err)
	}
}

func TestSweep(t *testing.T) {
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	dir := t.TempDir()
	s := open(t, dir, Options{Now: clock, QuarantineKeep: 24 * time.Hour})
	a := put(t, s, []byte("a"), "")
	if err := s.Quarantine(bg, a.ID, "test"); err != nil {
		t.Fatal(err)
	}
	// An orphan sidecar, as a crash after the sidecar rename leaves.
	s.failpoint = func(step string) error {
		if step == stepSidecarRenamed {
			return errors.New("crash")
		}
		return nil
	}
	s.Put(bg, bytes.NewReader([]byte("orphan")), store.PutOptions{})
	s.failpoint = nil
	orphan := s.metaPath(store.Sum([]byte("orphan")))
	kept := put(t, s, []byte("kept"), "")

	if n, err := s.Sweep(bg); err != nil || n != 0 {
		t.Fatalf("early Sweep removed %d (%v)", n, err)
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(orphan, old, old)
	os.Chtimes(s.metaPath(kept.ID), old, old)
	if n, err := s.Sweep(bg); err != nil || n != 1 {
		t.Fatalf("Sweep removed %d (%v), want the orphan", n, err)
	}
	if _, err := os.Stat(orphan); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("orphan sidecar kept")
	}
	advance(25 * time.Hour)
	if n, err := s.Sweep(bg); err != nil || n != 2 {
		t.Fatalf("Sweep removed %d (%v), want quarantined data and sidecar", n, err)
	}
	if _, err := s.Stat(bg, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Stat after sweep = %v", err)
	}
	if st := s.Stats(); st.Quarantined != 0 {
		t.Fatalf("Stats = %+v", st)
	}
	if _, err := storetest.ReadAll(t, s, kept.ID); err != nil {
		t.Fatal(err)
	}
}

func TestRecount(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	for i := range 5 {
		put(t, s, storetest.Pattern(i*1000+1), "")
	}
	s.Close()
	s = open(t, dir, Options{})
	if st := s.Stats(); st.Objects != 0 {
		t.Fatalf("no scan expected at open: %+v", st)
	}
	if err := s.Recount(bg); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Objects != 5 || st.Bytes != 10005 {
		t.Fatalf("Stats = %+v", st)
	}
}

func TestNoSpace(t *testing.T) {
	s := open(t, t.TempDir(), Options{MinFreeBytes: 1 << 62})
	r := &countReader{}
	if _, _, err := s.Put(bg, r, store.PutOptions{}); !errors.Is(err, store.ErrNoSpace) || r.n != 0 {
		t.Fatalf("err = %v after %d bytes, want ErrNoSpace before reading", err, r.n)
	}

	s = open(t, t.TempDir(), Options{MinFreeBytes: 100})
	var free atomic.Int64
	free.Store(1 << 40)
	s.statfs = func() (int64, error) { return free.Load(), nil }
	s.checkEvery = 1 << 20
	data := storetest.Pattern(5 << 20)
	rd := &hookReader{r: bytes.NewReader(data), after: 2 << 20, fn: func() { free.Store(50) }}
	if _, _, err := s.Put(bg, rd, store.PutOptions{}); !errors.Is(err, store.ErrNoSpace) {
		t.Fatalf("mid-stream: %v", err)
	}
	assertTmpEmpty(t, s)
	if _, err := s.Stat(bg, store.Sum(data)); !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	s.SetMinFreeBytes(10)
	if _, _, err := s.Put(bg, bytes.NewReader(data), store.PutOptions{}); err != nil {
		t.Fatalf("after lowering min free bytes live: %v", err)
	}
}

type countReader struct{ n int }

func (r *countReader) Read(p []byte) (int, error) { r.n += len(p); return len(p), nil }

type hookReader struct {
	r     *bytes.Reader
	n     int
	after int
	fn    func()
}

func (h *hookReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.n += n
	if h.n >= h.after {
		h.fn()
	}
	return n, err
}

func TestSidecarCacheBound(t *testing.T) {
	s := open(t, t.TempDir(), Options{SidecarCacheBytes: 1000})
	for i := range 20 {
		put(t, s, storetest.Pattern(i+1), "")
	}
	n, b := s.cache.size()
	if b > 1000 || n == 0 || n >= 20 {
		t.Fatalf("cache: %d entries, %d bytes", n, b)
	}
	s2 := open(t, t.TempDir(), Options{SidecarCacheBytes: -1})
	put(t, s2, []byte("x"), "")
	if n, _ := s2.cache.size(); n != 0 {
		t.Fatal("disabled cache holds entries")
	}
	if _, err := storetest.ReadAll(t, s2, store.Sum([]byte("x"))); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkPut stores new objects whose length the caller states (hashed
// while received, as over HTTP with a Content-Length) or not (hashed after).
func BenchmarkPut(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20, 64 << 20} {
		for _, known := range []bool{true, false} {
			name := sizeName(size) + "/size-unknown"
			if known {
				name = sizeName(size) + "/size-known"
			}
			b.Run(name, func(b *testing.B) { benchmarkPut(b, size, known) })
		}
	}
}

func benchmarkPut(b *testing.B, size int, known bool) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	data := storetest.Pattern(size)
	opt := store.PutOptions{}
	if known {
		opt.Size = int64(size)
	}
	b.SetBytes(int64(size))
	for i := 0; b.Loop(); i++ {
		data[0] = byte(i) // a new object every time
		data[1] = byte(i >> 8)
		data[2] = byte(i >> 16)
		if _, created, err := s.Put(bg, bytes.NewReader(data), opt); err != nil || !created {
			b.Fatal(err, created)
		}
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}
