package manifest_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/manifest"
)

// writeTree creates files (rel path → content) under a new temp dir.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// fakePut hashes the file like a real upload would, after a random pause so
// that uploads finish out of order, and tracks how many run at once.
type fakePut struct {
	inFlight, maxInFlight, calls atomic.Int64
}

func (f *fakePut) put(ctx context.Context, path, rel string) (store.ID, int64, string, error) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	f.calls.Add(1)
	for {
		old := f.maxInFlight.Load()
		if n <= old || f.maxInFlight.CompareAndSwap(old, n) {
			break
		}
	}
	for range rand.IntN(64) { // shuffle completion order without wall-clock waits
		goruntime.Gosched()
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return store.ID{}, 0, "", err
	}
	typ := ""
	if strings.HasSuffix(rel, ".bin") {
		typ = "application/x-test-bin"
	}
	return store.Sum(b), int64(len(b)), typ, ctx.Err()
}

var sampleTree = map[string]string{
	"a.txt":             "alpha",
	"b/c.html":          "<p>c</p>",
	"b/d/noext":         "",
	"b/d/e.bin":         "\x00\x01",
	"b/d/deeper/f.css":  "p{}",
	"z/ü/😀.txt":         "emoji",
	"a-b/x.txt":         "sibling that sorts between a and a/",
	"many/000.unknownz": "0",
}

func TestFromDir(t *testing.T) {
	root := writeTree(t, sampleTree)
	must(t, os.Symlink(filepath.Join(root, "a.txt"), filepath.Join(root, "link.txt")))
	must(t, os.Symlink(filepath.Join(root, "b"), filepath.Join(root, "dirlink")))
	must(t, os.Symlink("/nonexistent", filepath.Join(root, "b", "dangling")))
	must(t, os.MkdirAll(filepath.Join(root, "empty", "dir"), 0o755))

	var warnings []string
	fp := &fakePut{}
	m, err := manifest.FromDir(context.Background(), root, fp.put, manifest.FromDirOptions{
		Meta: map[string]string{"title": "t"},
		Warn: func(s string) { warnings = append(warnings, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Entries) != len(sampleTree) {
		t.Fatalf("entries %v", m.Entries)
	}
	for rel, content := range sampleTree {
		e, ok := m.Entries[rel]
		if !ok || e.ID != store.Sum([]byte(content)) || e.Size != int64(len(content)) {
			t.Errorf("%s: %+v", rel, e)
		}
	}
	wantTypes := map[string]string{
		"a.txt":             "text/plain; charset=utf-8",
		"b/c.html":          "text/html; charset=utf-8",
		"b/d/noext":         manifest.DefaultType,
		"b/d/e.bin":         "application/x-test-bin",
		"many/000.unknownz": manifest.DefaultType,
	}
	for rel, typ := range wantTypes {
		if got := m.Entries[rel].Type; got != typ {
			t.Errorf("%s: type %q want %q", rel, got, typ)
		}
	}
	if m.Meta["title"] != "t" || len(m.Meta) != 1 {
		t.Errorf("meta %v", m.Meta)
	}
	if len(warnings) != 3 {
		t.Errorf("warnings %q, want 3 symlink warnings", warnings)
	}
	for _, w := range warnings {
		if !strings.Contains(w, "symlink") {
			t.Errorf("warning %q", w)
		}
	}
	if fp.maxInFlight.Load() > manifest.DefaultConcurrency {
		t.Errorf("max in flight %d > %d", fp.maxInFlight.Load(), manifest.DefaultConcurrency)
	}
	if _, err := manifest.Encode(m); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestFromDirDeterministic: the same tree, uploaded with different
// concurrency and random completion order, in two different directories,
// gets the same id.
func TestFromDirDeterministic(t *testing.T) {
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("d%d/f%02d.txt", i%5, i)] = fmt.Sprint("content ", i)
	}
	var ids []store.ID
	for _, conc := range []int{1, 3, 16, 0} {
		root := writeTree(t, files)
		fp := &fakePut{}
		m, err := manifest.FromDir(context.Background(), root, fp.put, manifest.FromDirOptions{Concurrency: conc})
		if err != nil {
			t.Fatal(err)
		}
		if m.Meta == nil || len(m.Meta) != 0 {
			t.Errorf("meta %v, want empty non-nil", m.Meta)
		}
		id, err := manifest.ID(m)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, id := range ids[1:] {
		if id != ids[0] {
			t.Fatalf("ids differ: %v", ids)
		}
	}
}

// TestFromDirConcurrencyBound holds every upload until `limit` of them are
// running at once, so the test proves both that the limit is reached and
// that it is never exceeded.
func TestFromDirConcurrencyBound(t *testing.T) {
	const limit, nfiles = 3, 12
	files := map[string]string{}
	for i := range nfiles {
		files[fmt.Sprintf("f%02d", i)] = fmt.Sprint(i)
	}
	root := writeTree(t, files)
	var inFlight, maxSeen atomic.Int64
	full := make(chan struct{})
	var once sync.Once
	put := func(ctx context.Context, path, rel string) (store.ID, int64, string, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		if n > maxSeen.Load() {
			maxSeen.Store(n) // only grows under the bound; checked below
		}
		if n > limit {
			return store.ID{}, 0, "", fmt.Errorf("%d uploads in flight", n)
		}
		if n == limit {
			once.Do(func() { close(full) })
		}
		select {
		case <-full:
		case <-time.After(5 * time.Second):
			return store.ID{}, 0, "", errors.New("limit never reached")
		}
		return store.Sum([]byte(rel)), 1, "", nil
	}
	m, err := manifest.FromDir(context.Background(), root, put, manifest.FromDirOptions{Concurrency: limit})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Entries) != nfiles {
		t.Fatalf("%d entries", len(m.Entries))
	}
	if got := maxSeen.Load(); got != limit {
		t.Errorf("max in flight %d, want %d", got, limit)
	}
}

func TestFromDirPutError(t *testing.T) {
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("f%02d", i)] = "x"
	}
	root := writeTree(t, files)
	boom := errors.New("boom")
	var calls atomic.Int64
	put := func(ctx context.Context, path, rel string) (store.ID, int64, string, error) {
		calls.Add(1)
		if rel == "f05" {
			return store.ID{}, 0, "", boom
		}
		select {
		case <-ctx.Done():
			return store.ID{}, 0, "", ctx.Err()
		case <-time.After(time.Millisecond):
		}
		return store.ID{}, 1, "", nil
	}
	_, err := manifest.FromDir(context.Background(), root, put, manifest.FromDirOptions{Concurrency: 2})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "f05") {
		t.Fatalf("err = %v", err)
	}
	if n := calls.Load(); n == 50 {
		t.Errorf("all %d uploads ran after a failure", n)
	}
}

func TestFromDirBadPutResult(t *testing.T) {
	root := writeTree(t, map[string]string{"a": "x"})
	put := func(ctx context.Context, path, rel string) (store.ID, int64, string, error) {
		return store.ID{}, -1, "", nil
	}
	_, err := manifest.FromDir(context.Background(), root, put, manifest.FromDirOptions{})
	checkErr(t, err, `entries["a"].size`)
	put = func(ctx context.Context, path, rel string) (store.ID, int64, string, error) {
		return store.ID{}, 1, "not a type", nil
	}
	_, err = manifest.FromDir(context.Background(), root, put, manifest.FromDirOptions{})
	checkErr(t, err, `entries["a"].type`)
}

func TestFromDirCanceled(t *testing.T) {
	root := writeTree(t, sampleTree)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fp := &fakePut{}
	_, err := manifest.FromDir(ctx, root, fp.put, manifest.FromDirOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if fp.calls.Load() != 0 {
		t.Errorf("%d uploads after cancel", fp.calls.Load())
	}
}

func TestFromDirBadInputs(t *testing.T) {
	fp := &fakePut{}
	// A file name that cannot be a manifest path fails before any upload.
	root := writeTree(t, map[string]string{"ok.txt": "1", `bad\name`: "2"})
	_, err := manifest.FromDir(context.Background(), root, fp.put, manifest.FromDirOptions{})
	checkErr(t, err, "forbidden byte 0x5c")
	if fp.calls.Load() != 0 {
		t.Errorf("%d uploads before the path error", fp.calls.Load())
	}
	// Root must be a directory.
	_, err = manifest.FromDir(context.Background(), filepath.Join(root, "ok.txt"), fp.put, manifest.FromDirOptions{})
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file root: %v", err)
	}
	_, err = manifest.FromDir(context.Background(), filepath.Join(root, "missing"), fp.put, manifest.FromDirOptions{})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing root: %v", err)
	}
	// Bad meta is refused.
	good := writeTree(t, map[string]string{"a": "1"})
	_, err = manifest.FromDir(context.Background(), good, fp.put, manifest.FromDirOptions{Meta: map[string]string{"": "v"}})
	checkErr(t, err, "key length 0")
}

func TestFromDirSymlinkRoot(t *testing.T) {
	root := writeTree(t, map[string]string{"a/b.txt": "1"})
	link := filepath.Join(t.TempDir(), "link")
	must(t, os.Symlink(root, link))
	fp := &fakePut{}
	m, err := manifest.FromDir(context.Background(), link, fp.put, manifest.FromDirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Entries["a/b.txt"]; !ok || len(m.Entries) != 1 {
		t.Fatalf("entries %v", m.Entries)
	}
}

func TestFromDirEmpty(t *testing.T) {
	m, err := manifest.FromDir(context.Background(), t.TempDir(), (&fakePut{}).put, manifest.FromDirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := manifest.Encode(m)
	if err != nil || string(b) != `{"entries":{},"meta":{},"version":1}` {
		t.Fatalf("%s %v", b, err)
	}
}
