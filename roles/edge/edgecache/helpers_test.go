package edgecache

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/edge/httpcache"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
)

// mode is one storage mode every behaviour runs in.
type mode struct {
	name string
	disk bool
}

var modes = []mode{{"memory", false}, {"disk", true}}

// clock is an injectable Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (k *clock) Now() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.t
}

func (k *clock) Add(d time.Duration) {
	k.mu.Lock()
	k.t = k.t.Add(d)
	k.mu.Unlock()
}

// env is a cache under test with its options (for reopening).
type env struct {
	t   *testing.T
	opt Options
	c   *Cache
	clk *clock
}

func newEnv(t *testing.T, m mode, maxBytes int64) *env {
	t.Helper()
	clk := newClock()
	opt := Options{MaxBytes: maxBytes, MaxVariants: 4, Metrics: runtime.NewMetrics(nil), Log: zerolog.Nop(), Now: clk.Now}
	if m.disk {
		opt.Dir = t.TempDir()
	}
	e := &env{t: t, opt: opt, clk: clk}
	e.c = mustOpen(t, opt)
	t.Cleanup(func() { e.c.Close() })
	return e
}

func mustOpen(t *testing.T, opt Options) *Cache {
	t.Helper()
	c, err := Open(opt)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return c
}

// reopen closes the cache and opens it again on the same directory.
func (e *env) reopen() {
	e.t.Helper()
	if err := e.c.Close(); err != nil {
		e.t.Fatalf("Close: %v", err)
	}
	e.c = mustOpen(e.t, e.opt)
}

// body returns n deterministic bytes derived from seed.
func body(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*31 + i*7 + i/251)
	}
	return b
}

// putObject fills and commits b as an object.
func (e *env) putObject(b []byte, ctype string) store.ID {
	e.t.Helper()
	id := store.Sum(b)
	f, err := e.c.NewFill(int64(len(b)))
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		e.t.Fatal(err)
	}
	if err := f.CommitObject(id, ctype); err != nil {
		e.t.Fatalf("CommitObject: %v", err)
	}
	return id
}

// stored returns a stored response selected by accept (Vary: Accept).
func stored(accept string) *httpcache.Stored {
	h := http.Header{}
	h.Add("Content-Type", "text/plain")
	h.Add("Vary", "Accept")
	h.Add("Set-Cookie", "a=1")
	h.Add("Set-Cookie", "b=2")
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC)
	return &httpcache.Stored{
		Status: 200, Header: h, BodyLen: -1,
		RequestTime: t0, ResponseTime: t0.Add(time.Millisecond),
		Selecting: []httpcache.Selected{{Name: "Accept", Value: accept, Raw: []string{accept}, Present: accept != ""}},
	}
}

// putAsset fills and commits b as a variant of key.
func (e *env) putAsset(key string, st *httpcache.Stored, b []byte) {
	e.t.Helper()
	f, err := e.c.NewFill(-1)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i < len(b); i += 1000 {
		if _, err := f.Write(b[i:min(i+1000, len(b))]); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := f.CommitAsset(key, st); err != nil {
		e.t.Fatalf("CommitAsset: %v", err)
	}
}

// readBlob reads all of b and closes it.
func readBlob(t *testing.T, b Blob) []byte {
	t.Helper()
	defer b.Close()
	out, err := io.ReadAll(io.NewSectionReader(b, 0, b.Size()))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wantObject checks that id is stored with b and ctype.
func (e *env) wantObject(id store.ID, b []byte, ctype string) {
	e.t.Helper()
	blob, ct, ok := e.c.Object(id)
	if !ok {
		e.t.Fatalf("object %s missing", id.Prefix())
	}
	if got := readBlob(e.t, blob); !bytes.Equal(got, b) || ct != ctype {
		e.t.Fatalf("object %s: %d bytes, type %q; want %d bytes, %q", id.Prefix(), len(got), ct, len(b), ctype)
	}
}

func (e *env) wantNoObject(id store.ID) {
	e.t.Helper()
	if b, _, ok := e.c.Object(id); ok {
		b.Close()
		e.t.Fatalf("object %s still stored", id.Prefix())
	}
}

// readFollower reads a follower to its end.
func readFollower(ctx context.Context, r *Follower) ([]byte, error) {
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := r.ReadAt(ctx, buf, int64(len(out)))
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func metaBytes(key string, st *httpcache.Stored) int64 { return assetMeta(key, st) }

func keyN(i int) string { return fmt.Sprintf("o/path/%d?", i) }
