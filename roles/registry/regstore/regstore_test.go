package regstore

import (
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/store/kv/bolt"
)

// trustRootsFile is the known-answer trust-roots file (k1, k2; 1 of 2).
var trustRootsFile = filepath.Join("..", "testdata", "trust-roots.json")

func TestLockedStore(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, DirName), 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, DirName, RegistryDB)
	held, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		_, err := Open(t.Context(), Spec{DataDir: dir, SegmentRecords: 1024})
		want := "registry database locked by another process: " + path
		if err == nil || err.Error() != want {
			t.Fatalf("got %v, want %q", err, want)
		}
		if time.Since(start) < OpenTimeout {
			t.Fatalf("gave up after %v, want the %v open timeout", time.Since(start), OpenTimeout)
		}
		if _, err := Init(t.Context(), dir, trustRootsFile, "", time.Now()); err == nil || err.Error() != want {
			t.Fatalf("InitStore on a locked store: %v", err)
		}
	})
}

func TestInitStoreBadInput(t *testing.T) {
	if _, err := Init(t.Context(), t.TempDir(), "", "", time.Now()); err == nil {
		t.Fatal("init without trust roots")
	}
	if _, err := Init(t.Context(), t.TempDir(), filepath.Join(t.TempDir(), "none.json"), "", time.Now()); err == nil {
		t.Fatal("init with a missing file")
	}
	if _, err := Init(t.Context(), t.TempDir(), trustRootsFile, "bad origin", time.Now()); err == nil {
		t.Fatal("init with a bad origin")
	}
}
