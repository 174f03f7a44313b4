package edgecache

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/ronhq/ron/store"
)

var diskMode = mode{"disk", true}

func TestReopenRestoresEntries(t *testing.T) {
	e := newEnv(t, diskMode, 1<<20)
	obj := e.putObject(body(80, 70_000), "image/webp")
	e.clk.Add(time.Second)
	key := keyN(1)
	e.putAsset(key, stored("a"), body(81, 3000))
	e.clk.Add(time.Second)
	e.putAsset(key, stored("b"), body(82, 4000))
	e.c.Invalidate(key)
	before := e.c.Variants(key)
	stats := e.c.Stats()
	e.reopen()
	e.wantObject(obj, body(80, 70_000), "image/webp")
	after := e.c.Variants(key)
	if len(after) != 2 {
		t.Fatalf("variants after reopen: %d", len(after))
	}
	for i := range after {
		if !reflect.DeepEqual(after[i].Stored, before[i].Stored) || after[i].Blob != before[i].Blob {
			t.Fatalf("variant %d differs:\n%+v\n%+v", i, after[i].Stored, before[i].Stored)
		}
	}
	if got := e.c.Stats(); got != stats {
		t.Fatalf("stats %+v, want %+v", got, stats)
	}
	// sequence numbers continue: a new variant does not overwrite a record
	e.putAsset(key, stored("c"), body(83, 10))
	e.reopen()
	if n := len(e.c.Variants(key)); n != 3 {
		t.Fatalf("variants after second reopen: %d", n)
	}
}

// TestAccessTimesPersisted: access order survives a restart, but an access
// is written at most once a minute per entry.
func TestAccessTimesPersisted(t *testing.T) {
	e := newEnv(t, diskMode, 1<<20)
	a := e.putObject(body(90, 1000), "")
	e.clk.Add(time.Second)
	b := e.putObject(body(91, 1000), "")
	e.clk.Add(30 * time.Second)
	e.wantObject(a, body(90, 1000), "") // within a minute of its save: not written
	e.reopen()
	e.c.SetLimits(1000, 0)
	e.wantNoObject(a)
	e.wantObject(b, body(91, 1000), "")

	e.c.SetLimits(1<<20, 0)
	a = e.putObject(body(90, 1000), "")
	e.clk.Add(time.Second)
	b = e.putObject(body(91, 1000), "")
	e.clk.Add(2 * time.Minute)
	e.wantObject(a, body(90, 1000), "") // a minute later: written at once
	dir := copyDir(t, e.opt.Dir)        // as after kill -9: no Close
	opt := e.opt
	opt.Dir, opt.MaxBytes = dir, 1000
	c := mustOpen(t, opt)
	defer c.Close()
	if _, _, ok := c.Object(b); ok {
		t.Fatal("b kept: a's access was not persisted")
	}
	blob, _, ok := c.Object(a)
	if !ok {
		t.Fatal("a evicted")
	}
	blob.Close()
}

// TestCopyAfterCommit: the directory copied right after a commit (no Close,
// as after kill -9) opens with the entry; a fill in progress leaves nothing.
func TestCopyAfterCommit(t *testing.T) {
	e := newEnv(t, diskMode, 1<<20)
	b := body(100, 300_000)
	id := e.putObject(b, "application/x")
	e.putAsset(keyN(1), stored("z"), body(101, 500))
	open, _ := e.c.NewFill(-1)
	open.Write(body(102, 10_000))
	defer open.Abort(nil)
	opt := e.opt
	opt.Dir = copyDir(t, e.opt.Dir)
	if n := countFiles(t, filepath.Join(opt.Dir, "blobs", "tmp")); n != 1 {
		t.Fatalf("copied tmp files: %d", n)
	}
	c := mustOpen(t, opt)
	defer c.Close()
	if n := countFiles(t, filepath.Join(opt.Dir, "blobs", "tmp")); n != 0 {
		t.Fatalf("tmp leftovers after Open: %d", n)
	}
	blob, ct, ok := c.Object(id)
	if !ok || ct != "application/x" || !bytes.Equal(readBlob(t, blob), b) {
		t.Fatal("object lost")
	}
	if vs := c.Variants(keyN(1)); len(vs) != 1 || vs[0].Stored.BodyLen != 500 {
		t.Fatalf("asset lost: %+v", vs)
	}
	if s := c.Stats(); s.Entries != 2 {
		t.Fatalf("stats %+v", s)
	}
}

// TestReconcileRepairs: blobs without entries are removed, entries without
// (intact) blobs dropped.
func TestReconcileRepairs(t *testing.T) {
	e := newEnv(t, diskMode, 1<<20)
	keep := e.putObject(body(110, 2000), "")
	lost := e.putObject(body(111, 2000), "")
	short := e.putObject(body(112, 2000), "")
	e.putAsset(keyN(1), stored(""), body(113, 700))
	assetBlob := e.c.Variants(keyN(1))[0].Blob
	e.c.Close()
	dir := e.opt.Dir
	orphan := store.Sum([]byte("orphan"))
	writeFile(t, blobPathIn(dir, orphan), []byte("orphan"))
	writeFile(t, filepath.Join(dir, "blobs", blobPathIn(dir, orphan)[len(dir)+7:len(dir)+9], "junk"), []byte("j"))
	writeFile(t, filepath.Join(dir, "blobs", "tmp", "fill-123"), []byte("partial"))
	must(t, os.Remove(blobPathIn(dir, lost)))
	must(t, os.Remove(blobPathIn(dir, assetBlob)))
	must(t, os.WriteFile(blobPathIn(dir, short), []byte("cut"), 0o600))

	e.c = mustOpen(t, e.opt)
	if s := e.c.Stats(); s.Entries != 4 {
		t.Fatalf("Open checked blobs already: %+v", s)
	}
	if err := e.c.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.wantObject(keep, body(110, 2000), "")
	e.wantNoObject(lost)
	e.wantNoObject(short)
	if len(e.c.Variants(keyN(1))) != 0 {
		t.Fatal("asset without blob kept")
	}
	for _, p := range []string{blobPathIn(dir, orphan), blobPathIn(dir, short), filepath.Join(dir, "blobs", "tmp", "fill-123")} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s still there (%v)", p, err)
		}
	}
	if s := e.c.Stats(); s.Entries != 1 || s.Blobs != 1 || s.Bytes != 2000 {
		t.Fatalf("stats %+v", s)
	}
	e.reopen() // the drops were persisted
	if s := e.c.Stats(); s.Entries != 1 {
		t.Fatalf("after reopen %+v", s)
	}
}

// TestMissingBlobOnHit: a hit whose file is gone is a miss and drops the entry.
func TestMissingBlobOnHit(t *testing.T) {
	e := newEnv(t, diskMode, 1<<20)
	id := e.putObject(body(120, 100), "")
	must(t, os.Remove(blobPathIn(e.opt.Dir, id)))
	e.wantNoObject(id)
	if s := e.c.Stats(); s != (Stats{}) {
		t.Fatalf("stats %+v", s)
	}
	e.putObject(body(120, 100), "") // fills again
	e.wantObject(id, body(120, 100), "")
}

func TestReconcileCanceled(t *testing.T) {
	e := newEnv(t, diskMode, 1<<20)
	e.putObject(body(130, 10), "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.c.Reconcile(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Reconcile = %v", err)
	}
	m := newEnv(t, mode{"memory", false}, 100)
	if err := m.c.Reconcile(ctx); err != nil {
		t.Fatalf("memory Reconcile = %v", err)
	}
}

// TestReopenSmallerBudget: Open evicts down to a smaller budget.
func TestReopenSmallerBudget(t *testing.T) {
	e := newEnv(t, diskMode, 1<<20)
	var ids []store.ID
	for i := range 4 {
		ids = append(ids, e.putObject(body(140+i, 1000), ""))
		e.clk.Add(time.Second)
	}
	e.c.Close()
	e.opt.MaxBytes = 2000
	e.c = mustOpen(t, e.opt)
	e.wantNoObject(ids[0])
	e.wantNoObject(ids[1])
	e.wantObject(ids[3], body(143, 1000), "")
	if _, err := os.Stat(blobPathIn(e.opt.Dir, ids[0])); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("evicted blob file kept (%v)", err)
	}
}

// TestBadRecordsDropped: undecodable meta.db records are deleted at Open.
func TestBadRecordsDropped(t *testing.T) {
	e := newEnv(t, diskMode, 1<<20)
	id := e.putObject(body(150, 10), "")
	e.c.Close()
	db, err := bbolt.Open(filepath.Join(e.opt.Dir, "meta.db"), 0o600, nil)
	must(t, err)
	must(t, db.Update(func(tx *bbolt.Tx) error {
		must(t, tx.Bucket(bucketObjects).Put([]byte("short"), []byte("{}")))
		must(t, tx.Bucket(bucketObjects).Put(make([]byte, 32), []byte("not json")))
		must(t, tx.Bucket(bucketAssets).Put(make([]byte, 8), []byte(`{"key":"k","blob":"zz"}`)))
		return tx.Bucket(bucketAssets).Put([]byte{1}, []byte(`{}`))
	}))
	must(t, db.Close())
	e.c = mustOpen(t, e.opt)
	e.wantObject(id, body(150, 10), "")
	if s := e.c.Stats(); s.Entries != 1 {
		t.Fatalf("stats %+v", s)
	}
	e.c.Close()
	db, err = bbolt.Open(filepath.Join(e.opt.Dir, "meta.db"), 0o600, nil)
	must(t, err)
	defer db.Close()
	must(t, db.View(func(tx *bbolt.Tx) error {
		if n := tx.Bucket(bucketObjects).Stats().KeyN + tx.Bucket(bucketAssets).Stats().KeyN; n != 1 {
			t.Fatalf("%d records left", n)
		}
		return nil
	}))
}

func TestOpenErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	writeFile(t, file, []byte("x"))
	locked := t.TempDir()
	first := mustOpen(t, Options{Dir: locked, MaxBytes: 100})
	defer first.Close()
	cases := []struct {
		name string
		dir  string
	}{
		{"dir is a file", file},
		{"below a file", filepath.Join(file, "edge")},
		{"meta.db is a directory", mkdirs(t, "meta.db")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if cache, err := Open(Options{Dir: c.dir, MaxBytes: 100}); err == nil {
				cache.Close()
				t.Fatal("Open succeeded")
			}
		})
	}
}

// mkdirs returns a temp dir containing the directory name.
func mkdirs(t *testing.T, name string) string {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, name), 0o750))
	return dir
}

func blobPathIn(dir string, id store.ID) string {
	return filepath.Join(dir, "blobs", id.Hex()[:2], id.Hex())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o750))
	must(t, os.WriteFile(path, b, 0o600))
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	des, err := os.ReadDir(dir)
	must(t, err)
	return len(des)
}

// copyDir copies a cache directory as it is on disk right now.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	must(t, filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o750)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, in)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		return err
	}))
	return dst
}
