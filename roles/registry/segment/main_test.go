package segment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fsCase is one FS implementation the shared tables run against.
type fsCase struct {
	name string
	mk   func(t *testing.T) (FS, string)
}

var fsCases = []fsCase{
	{"os", func(t *testing.T) (FS, string) { return OSFS{}, filepath.Join(t.TempDir(), "registry", "log") }},
	{"mem", func(*testing.T) (FS, string) { return NewMemFS(), "/data/registry/log" }},
}

// forEachFS runs fn as a subtest per FS implementation.
func forEachFS(t *testing.T, fn func(t *testing.T, fsys FS, dir string)) {
	for _, c := range fsCases {
		t.Run(c.name, func(t *testing.T) {
			fsys, dir := c.mk(t)
			fn(t, fsys, dir)
		})
	}
}

// artifact is a deterministic, variably sized stand-in for version v's JCS.
func artifact(v uint64) []byte {
	pad := bytes.Repeat([]byte{'a' + byte(v%26)}, int(v*7%97))
	return fmt.Appendf(nil, `{"version":%d,"pad":"%s"}`, v, pad)
}

// record is the test record for version v.
func record(v uint64) Record {
	return Record{Version: v, CorrID: "c-" + strconv.FormatUint(v, 10), Artifact: artifact(v)}
}

func records(from uint64, n int) []Record {
	out := make([]Record, n)
	for i := range out {
		out[i] = record(from + uint64(i))
	}
	return out
}

// checkArtifact is the injected "artifact parses with the same version".
func checkArtifact(v uint64, art []byte) error {
	rest, ok := bytes.CutPrefix(art, []byte(`{"version":`))
	if !ok {
		return errors.New("not an artifact")
	}
	n := bytes.IndexByte(rest, ',')
	if n < 0 {
		return errors.New("no version")
	}
	got, err := strconv.ParseUint(string(rest[:n]), 10, 64)
	if err != nil || got != v {
		return fmt.Errorf("artifact version %q, want %d", rest[:n], v)
	}
	return nil
}

func opts(fsys FS, head int64) Options {
	return Options{FS: fsys, SegmentRecords: 256, Check: checkArtifact, DurableHead: head}
}

func mustOpen(t *testing.T, dir string, opt Options) (*Log, Recovery) {
	t.Helper()
	l, rec, err := Open(dir, opt)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l, rec
}

// build creates a log of n records appended in batches of batch.
func build(t *testing.T, fsys FS, dir string, n, batch int) {
	t.Helper()
	l, _ := mustOpen(t, dir, opts(fsys, -1))
	appendAll(t, l, 0, n, batch)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func appendAll(t *testing.T, l *Log, from uint64, n, batch int) {
	t.Helper()
	for i := 0; i < n; i += batch {
		if err := l.Append(records(from+uint64(i), min(batch, n-i))); err != nil {
			t.Fatalf("Append at %d: %v", from+uint64(i), err)
		}
	}
}

// readAll returns a file's bytes through fsys.
func readAll(t *testing.T, fsys FS, path string) []byte {
	t.Helper()
	f, err := fsys.OpenRead(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return b
}

// writeAll replaces (or creates) a file's bytes through fsys.
func writeAll(t *testing.T, fsys FS, path string, b []byte) {
	t.Helper()
	if err := fsys.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	f, err := fsys.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Append(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func segPath(dir string, first uint64) string { return filepath.Join(dir, SegmentName(first)) }

// equalRecord fails unless got is record(v).
func equalRecord(t *testing.T, got Record, v uint64) {
	t.Helper()
	want := record(v)
	if got.Version != want.Version || got.CorrID != want.CorrID || !bytes.Equal(got.Artifact, want.Artifact) {
		t.Fatalf("record %d = {%d %q %q}", v, got.Version, got.CorrID, got.Artifact)
	}
}

// checkReads reads every version in [from, to) one by one and by Scan.
func checkReads(t *testing.T, l *Log, from, to uint64) {
	t.Helper()
	for v := from; v < to; v++ {
		r, err := l.Read(v)
		if err != nil {
			t.Fatalf("Read(%d): %v", v, err)
		}
		equalRecord(t, r, v)
	}
	if to == from {
		return
	}
	next := from
	err := l.Scan(from, to-1, func(r Record) error {
		equalRecord(t, r, next)
		next++
		return nil
	})
	if err != nil || next != to {
		t.Fatalf("Scan(%d, %d) stopped at %d: %v", from, to-1, next, err)
	}
}
