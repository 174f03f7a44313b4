package edgecache

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestSameBlobRaces: commits of one body race with evictions of it; the
// index and blobs/ must agree afterwards (every entry's file exists, no
// orphan files, no temp files).
func TestSameBlobRaces(t *testing.T) {
	e := newEnv(t, diskMode, 1<<20)
	b := body(160, 20_000)
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := range 25 {
				switch (w + i) % 3 {
				case 0:
					e.putObject(b, "")
				case 1:
					e.putAsset(keyN(w), stored(""), b)
				default:
					e.c.SetLimits(0, 0)
					e.c.SetLimits(1<<20, 0)
				}
			}
		})
	}
	wg.Wait()
	id := e.putObject(b, "")
	e.putAsset(keyN(99), stored(""), b)
	if err := e.c.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.wantObject(id, b, "")
	s := e.c.Stats()
	if s.Blobs != 1 {
		t.Fatalf("stats %+v", s)
	}
	var files []string
	must(t, filepath.Walk(filepath.Join(e.opt.Dir, "blobs"), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			files = append(files, p)
		}
		return err
	}))
	if len(files) != 1 || files[0] != blobPathIn(e.opt.Dir, id) {
		t.Fatalf("files %v", files)
	}
}

// TestCloseWaitsForDBUsers: meta.db stays open for a commit in flight and
// closes when it ends.
func TestCloseWaitsForDBUsers(t *testing.T) {
	e := newEnv(t, diskMode, 1<<20)
	if !e.c.acquireDB() {
		t.Fatal("acquireDB false")
	}
	must(t, e.c.Close())
	if e.c.acquireDB() {
		t.Fatal("acquireDB after Close")
	}
	if err := e.c.persistTx([]dbKey{{seq: 1}}); err != nil {
		t.Fatalf("db closed under its user: %v", err)
	}
	e.c.releaseDB()
	e.c = mustOpen(t, e.opt) // the file lock was released
}
