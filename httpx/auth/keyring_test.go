package auth

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLoadOrCreateCreatesWithModes(t *testing.T) {
	dir := t.TempDir()
	k, err := LoadOrCreateRootKey(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(KeyPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	di, err := os.Stat(filepath.Dir(KeyPath(dir)))
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Errorf("key dir mode %v, want 0700", di.Mode().Perm())
	}
	data, _ := os.ReadFile(KeyPath(dir))
	if len(data) != 65 || data[64] != '\n' {
		t.Errorf("key file is %d bytes, want 64 hex + newline", len(data))
	}
	again, err := LoadOrCreateRootKey(dir, false)
	if err != nil || !bytes.Equal(again.key, k.key) {
		t.Fatalf("second start got a different key (err %v)", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(KeyPath(dir)))
	if len(entries) != 1 {
		t.Errorf("key dir holds %d entries, want only root.key", len(entries))
	}
}

func TestLoadOrCreateConcurrentFirstStarts(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	keys := make([]*Keyring, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { keys[i], errs[i] = LoadOrCreateRootKey(dir, false) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("goroutine %d: %v", i, errs[i])
		}
		if !bytes.Equal(keys[i].key, keys[0].key) {
			t.Fatalf("goroutine %d got a different key", i)
		}
	}
	onDisk, err := ReadRootKey(dir)
	if err != nil || !bytes.Equal(onDisk.key, keys[0].key) {
		t.Fatalf("key on disk differs (err %v)", err)
	}
}

func TestAmnesiaWritesNothing(t *testing.T) {
	dir := t.TempDir()
	k, err := LoadOrCreateRootKey(dir, true)
	if err != nil || len(k.key) != KeySize {
		t.Fatalf("amnesia key: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("amnesia wrote %d entries", len(entries))
	}
	k2, _ := LoadOrCreateRootKey(dir, true)
	if bytes.Equal(k.key, k2.key) {
		t.Fatal("two amnesia keys are equal")
	}
}

func TestAmnesiaReadsExistingKey(t *testing.T) {
	dir := t.TempDir()
	k, err := LoadOrCreateRootKey(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := LoadOrCreateRootKey(dir, true)
	if err != nil || !bytes.Equal(k.key, k2.key) {
		t.Fatalf("amnesia did not use the existing key (err %v)", err)
	}
}

func TestKeyFileFormats(t *testing.T) {
	raw := bytes.Repeat([]byte{0xab}, KeySize)
	cases := []struct {
		name string
		data []byte
		ok   bool
	}{
		{"raw 32 bytes", raw, true},
		{"hex", []byte(strings.Repeat("ab", KeySize)), true},
		{"hex newline", []byte(strings.Repeat("ab", KeySize) + "\n"), true},
		{"hex crlf", []byte(strings.Repeat("ab", KeySize) + "\r\n"), true},
		{"empty", nil, false},
		{"short", raw[:31], false},
		{"33 bytes", append(raw, 0), false},
		{"short hex", []byte(strings.Repeat("ab", KeySize-1)), false},
		{"bad hex", []byte(strings.Repeat("zz", KeySize)), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeKeyFile(t, dir, tc.data)
			k, err := ReadRootKey(dir)
			if !tc.ok {
				if !errors.Is(err, ErrBadKey) {
					t.Fatalf("err = %v, want ErrBadKey", err)
				}
				if _, err := LoadOrCreateRootKey(dir, false); !errors.Is(err, ErrBadKey) {
					t.Fatalf("LoadOrCreate err = %v, want ErrBadKey", err)
				}
				return
			}
			if err != nil || !bytes.Equal(k.key, raw) {
				t.Fatalf("key = %x, err %v", k, err)
			}
		})
	}
}

func TestReadRootKeyErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadRootKey(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing key: %v, want fs.ErrNotExist", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatal("ReadRootKey created something")
	}
	if os.Geteuid() == 0 {
		t.Skip("root reads mode-000 files")
	}
	writeKeyFile(t, dir, []byte(strings.Repeat("ab", KeySize)))
	if err := os.Chmod(KeyPath(dir), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRootKey(dir); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("unreadable key: %v, want fs.ErrPermission", err)
	}
}

func TestNewKeyringSize(t *testing.T) {
	if _, err := NewKeyring(make([]byte, 16)); !errors.Is(err, ErrBadKey) {
		t.Fatalf("err = %v", err)
	}
}

func writeKeyFile(t *testing.T, dir string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(KeyPath(dir)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(KeyPath(dir), data, 0o600); err != nil {
		t.Fatal(err)
	}
}
