package durable

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestLinkRename(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("1"), 0o640)
	os.WriteFile(b, []byte("2"), 0o640)
	if err := LinkRename(a, b); !errors.Is(err, ErrExists) {
		t.Fatalf("linkRename onto existing = %v", err)
	}
	if err := RenameNoReplace(a, b); !errors.Is(err, ErrExists) {
		t.Fatalf("renameNoReplace onto existing = %v", err)
	}
	c := filepath.Join(dir, "c")
	if err := LinkRename(a, c); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("source kept")
	}
	if got, _ := os.ReadFile(b); string(got) != "2" {
		t.Fatal("target replaced")
	}
}

func TestRenameNoReplaceOneWinner(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	var wg sync.WaitGroup
	wins := make(chan string, 16)
	for i := range 16 {
		src := filepath.Join(dir, "src"+string(rune('a'+i)))
		if err := WriteFileSync(src, []byte{byte(i)}, 0o640); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := RenameNoReplace(src, target); err == nil {
				wins <- src
			} else if !errors.Is(err, ErrExists) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	close(wins)
	if n := len(wins); n != 1 {
		t.Fatalf("%d renames won, want exactly 1", n)
	}
	if err := SyncDir(dir); err != nil {
		t.Fatal(err)
	}
}

func TestWriteFileSyncIsExclusive(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := WriteFileSync(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileSync(p, []byte("two"), 0o600); !errors.Is(err, os.ErrExist) {
		t.Fatalf("second write = %v, want ErrExist", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "one" {
		t.Fatalf("file replaced: %q", got)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
}
