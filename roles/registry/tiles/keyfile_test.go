package tiles

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLoadOrCreateLogKey(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	k, err := LoadOrCreateLogKey(data, "")
	if err != nil {
		t.Fatal(err)
	}
	if k.Origin() != DefaultOrigin(k.PublicKey()) {
		t.Fatalf("origin %q", k.Origin())
	}
	path := LogKeyPath(data)
	if path != filepath.Join(data, "keys", "registry-log.key") {
		t.Fatalf("path %s", path)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v", st.Mode(), err)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("key dir mode %v, %v", st.Mode(), err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "PRIVATE+KEY+"+k.Origin()+"+") || !strings.HasSuffix(string(b), "\n") {
		t.Fatalf("key file %q", b)
	}
	for _, origin := range []string{"", k.Origin()} {
		again, err := LoadOrCreateLogKey(data, origin)
		if err != nil || again.VerifierKey() != k.VerifierKey() {
			t.Fatalf("reload(%q) = %v, %v; want %s", origin, again, err, k)
		}
	}
	if _, err := LoadOrCreateLogKey(data, "registry.example.com/ron"); !errors.Is(err, ErrOriginMismatch) {
		t.Fatalf("other origin: %v, want ErrOriginMismatch", err)
	}
	if _, err := LoadOrCreateLogKey(data, "bad origin"); !errors.Is(err, ErrBadOrigin) {
		t.Fatalf("bad origin: %v, want ErrBadOrigin", err)
	}
}

func TestLoadOrCreateLogKeyNamed(t *testing.T) {
	data := t.TempDir()
	k, err := LoadOrCreateLogKey(data, "registry.example.com/ron")
	if err != nil || k.Origin() != "registry.example.com/ron" {
		t.Fatalf("%v, %v", k, err)
	}
	if _, err := LoadOrCreateLogKey(data, "ron-registry/0000000000000000"); !errors.Is(err, ErrOriginMismatch) {
		t.Fatalf("got %v, want ErrOriginMismatch", err)
	}
}

func TestLoadOrCreateLogKeyBadFile(t *testing.T) {
	other, err := NewLogKey("o")
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"empty":     "",
		"garbage":   "hello\n",
		"vkey":      other.VerifierKey() + "\n",
		"two lines": other.signerKey() + "\n\n",
		"huge":      strings.Repeat("A", maxKeyFile+1),
	} {
		data := t.TempDir()
		if err := os.MkdirAll(filepath.Join(data, "keys"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(LogKeyPath(data), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadOrCreateLogKey(data, ""); !errors.Is(err, ErrBadKey) {
			t.Errorf("%s: got %v, want ErrBadKey", name, err)
		}
	}
	data := t.TempDir()
	if err := os.MkdirAll(LogKeyPath(data), 0o700); err != nil { // a directory where the file belongs
		t.Fatal(err)
	}
	if _, err := LoadOrCreateLogKey(data, ""); err == nil {
		t.Error("directory as key file: no error")
	}
}

func TestLoadOrCreateLogKeyConcurrentAgree(t *testing.T) {
	data := t.TempDir()
	const n = 8
	keys := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			k, err := LoadOrCreateLogKey(data, "")
			errs[i] = err
			if err == nil {
				keys[i] = k.VerifierKey()
			}
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || keys[i] != keys[0] {
			t.Fatalf("creator %d: %s, %v; creator 0: %s", i, keys[i], errs[i], keys[0])
		}
	}
	entries, _ := os.ReadDir(filepath.Join(data, "keys"))
	if len(entries) != 1 {
		t.Fatalf("temp files left: %v", entries)
	}
}
