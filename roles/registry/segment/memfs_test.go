package segment

import (
	"errors"
	"io"
	"io/fs"
	"slices"
	"testing"
)

// TestFSContract runs the same file operations on OSFS and MemFS.
func TestFSContract(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys FS, dir string) {
		if err := fsys.MkdirAll(dir + "/sub"); err != nil {
			t.Fatal(err)
		}
		f, err := fsys.Create(dir + "/a")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fsys.Create(dir + "/a"); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("second Create: %v", err)
		}
		mustDo(t, f.Append([]byte("hello world")), f.Truncate(5), f.Append([]byte("!")), f.Sync())
		r, err := fsys.OpenRead(dir + "/a")
		if err != nil {
			t.Fatal(err)
		}
		mustDo(t, fsys.Remove(dir+"/a"), fsys.SyncDir(dir))
		buf := make([]byte, 10)
		if n, err := r.ReadAt(buf, 0); n != 6 || !errors.Is(err, io.EOF) || string(buf[:n]) != "hello!" {
			t.Fatalf("ReadAt after remove = %d %v %q", n, err, buf[:n])
		}
		if err := r.Append([]byte("x")); err == nil {
			t.Fatal("append on a read-only handle")
		}
		mustDo(t, r.Close(), f.Close())
		for _, op := range []func() error{
			func() error { _, err := fsys.OpenRead(dir + "/a"); return err },
			func() error { _, err := fsys.OpenAppend(dir + "/a"); return err },
			func() error { return fsys.Remove(dir + "/a") },
			func() error { _, err := fsys.ReadDir(dir + "/nope"); return err },
			func() error { _, err := fsys.Create(dir + "/nope/x"); return err },
		} {
			if err := op(); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("op on a missing path: %v", err)
			}
		}
		names, err := fsys.ReadDir(dir)
		if err != nil || !slices.Equal(names, []string{"sub"}) {
			t.Fatalf("ReadDir = %v, %v", names, err)
		}
	})
}

func mustDo(t *testing.T, errs ...error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
}
