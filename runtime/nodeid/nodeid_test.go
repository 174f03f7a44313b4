package nodeid

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/oklog/ulid/v2"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const valid = "01JD2Z3Y4X5W6V7T8S9R0QPNMK"

func TestLoadCreatesOnceAndRereads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data") // created on first use
	id, err := Load(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ulid.ParseStrict(id); err != nil {
		t.Fatalf("id %q: %v", id, err)
	}
	again, err := Load(dir, false)
	if err != nil || again != id {
		t.Fatalf("second Load = %q, %v; want %q", again, err, id)
	}
	b, err := os.ReadFile(Path(dir))
	if err != nil || string(b) != id+"\n" {
		t.Fatalf("file %q, %v", b, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temp files left: %v", entries)
	}
}

func TestLoadConcurrentFirstStartsAgree(t *testing.T) {
	dir := t.TempDir()
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			id, err := Load(dir, false)
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("ids differ: %v", ids)
		}
	}
}

func TestLoadAmnesiaWritesNothing(t *testing.T) {
	dir := t.TempDir()
	a, err := Load(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Load(dir, true)
	if a == b {
		t.Fatal("amnesia ids repeat")
	}
	if _, err := Parse([]byte(a)); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("amnesia wrote %v", entries)
	}
	if _, err := Load(filepath.Join(dir, "missing", "dir"), true); err != nil {
		t.Fatal(err)
	}
}

// TestLoadBadFiles: every file that is not exactly one canonical ULID is an
// error naming the file, and Load never replaces it.
func TestLoadBadFiles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		corrupt bool // else the error is an I/O one
		setup   func(t *testing.T, dir string)
	}{
		{name: "empty", content: "", corrupt: true},
		{name: "newline only", content: "\n", corrupt: true},
		{name: "garbage", content: "hello world\n", corrupt: true},
		{name: "lowercase", content: strings.ToLower(valid) + "\n", corrupt: true},
		{name: "short", content: valid[:25] + "\n", corrupt: true},
		{name: "long", content: valid + "A\n", corrupt: true},
		{name: "two newlines", content: valid + "\n\n", corrupt: true},
		{name: "crlf", content: valid + "\r\n", corrupt: true},
		{name: "leading space", content: " " + valid, corrupt: true},
		{name: "overflow", content: "80000000000000000000000000\n", corrupt: true},
		{name: "bad char", content: "01JD2Z3Y4X5W6V7T8S9R0QPNMU\n", corrupt: true},
		{name: "huge", content: strings.Repeat("A", 1<<20), corrupt: true},
		{name: "binary", content: "\x00\xff\x10", corrupt: true},
		{name: "directory", setup: func(t *testing.T, dir string) {
			if err := os.Mkdir(Path(dir), 0o750); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.setup != nil {
				tc.setup(t, dir)
			} else if err := os.WriteFile(Path(dir), []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			id, err := Load(dir, false)
			if err == nil {
				t.Fatalf("Load accepted it: %q", id)
			}
			if !strings.Contains(err.Error(), Path(dir)) || errors.Is(err, ErrCorrupt) != tc.corrupt {
				t.Fatalf("err %v", err)
			}
			if tc.setup == nil {
				if b, _ := os.ReadFile(Path(dir)); string(b) != tc.content {
					t.Fatal("bad file was replaced")
				}
			}
		})
	}
}

func TestLoadUncreatable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(file, false); err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("data dir is a file: %v", err)
	}
}

func TestParse(t *testing.T) {
	for _, in := range []string{valid, valid + "\n", "00000000000000000000000000", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"} {
		if got, err := Parse([]byte(in)); err != nil || got != strings.TrimSuffix(in, "\n") {
			t.Errorf("Parse(%q) = %q, %v", in, got, err)
		}
	}
}

// FuzzParse: Parse never panics, and what it accepts is a canonical ULID
// that parses to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{valid, valid + "\n", "", "\n", strings.ToLower(valid), "80000000000000000000000000", "x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		u, perr := ulid.ParseStrict(id)
		if perr != nil || u.String() != id || (string(b) != id && string(b) != id+"\n") {
			t.Fatalf("accepted %q as %q (%v)", b, id, perr)
		}
		if again, err := Parse([]byte(id)); err != nil || again != id {
			t.Fatalf("not idempotent: %q → %q, %v", id, again, err)
		}
	})
}
