package segment

import (
	"errors"
	"os"
	"testing"
)

func TestRoundTripAcrossSegments(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys FS, dir string) {
		l, rec := mustOpen(t, dir, opts(fsys, -1))
		if rec.Kind != KindClean || l.Next() != 0 {
			t.Fatalf("fresh log: %+v next %d", rec, l.Next())
		}
		var v uint64
		for _, n := range []int{1, 5, 250, 1, 300, 100, 43} {
			if err := l.Append(records(v, n)); err != nil {
				t.Fatal(err)
			}
			v += uint64(n)
		}
		if l.Next() != 700 {
			t.Fatalf("Next = %d", l.Next())
		}
		checkSegments(t, fsys, l, []int{256, 256, 188})
		checkReads(t, l, 0, 700)
		checkReads(t, l, 250, 521)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}

		l2, rec := mustOpen(t, dir, opts(fsys, 699))
		if rec.Kind != KindClean || len(rec.Beyond) != 0 || rec.Truncated != 0 || l2.Next() != 700 {
			t.Fatalf("reopen: %+v next %d", rec, l2.Next())
		}
		checkReads(t, l2, 0, 700)
		appendAll(t, l2, 700, 400, 64)
		checkSegments(t, fsys, l2, []int{256, 256, 256, 256, 76})
		checkReads(t, l2, 650, 1100)
	})
}

// checkSegments compares Segments() and Bytes() with the files on fsys.
func checkSegments(t *testing.T, fsys FS, l *Log, counts []int) {
	t.Helper()
	segs := l.Segments()
	if len(segs) != len(counts) {
		t.Fatalf("%d segments, want %d: %+v", len(segs), len(counts), segs)
	}
	var total int64
	for i, s := range segs {
		size := int64(len(readAll(t, fsys, s.Path)))
		if s.First != uint64(i*256) || s.Records != counts[i] || s.Bytes != size {
			t.Fatalf("segment %d = %+v, file %d bytes, want first %d records %d", i, s, size, i*256, counts[i])
		}
		total += size
	}
	if l.Bytes() != total {
		t.Fatalf("Bytes = %d, files hold %d", l.Bytes(), total)
	}
}

func TestOSFSModes(t *testing.T) {
	fsys, dir := fsCases[0].mk(t)
	build(t, fsys, dir, 10, 10)
	for path, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, segPath(dir, 0): 0o600} {
		st, err := os.Stat(path)
		if err != nil || st.Mode() != want {
			t.Fatalf("%s mode %v (%v), want %v", path, st.Mode(), err, want)
		}
	}
}

func TestReadErrors(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys FS, dir string) {
		build(t, fsys, dir, 300, 300)
		l, _ := mustOpen(t, dir, opts(fsys, 299))
		scan := func(from, to uint64) func() error {
			return func() error { return l.Scan(from, to, func(Record) error { return nil }) }
		}
		read := func(v uint64) func() error { return func() error { _, err := l.Read(v); return err } }
		stop := errors.New("stop")
		for _, c := range []struct {
			name string
			call func() error
			want error
		}{
			{"read at next", read(300), ErrNotFound},
			{"read far", read(1 << 60), ErrNotFound},
			{"scan past next", scan(290, 300), ErrNotFound},
			{"scan reversed", scan(5, 4), ErrInvalid},
			{"scan callback error", func() error { return l.Scan(0, 299, func(Record) error { return stop }) }, stop},
		} {
			if err := c.call(); !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", c.name, err, c.want)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		for name, call := range map[string]func() error{
			"read": read(1), "scan": scan(1, 2),
			"append": func() error { return l.Append(records(300, 1)) },
			"prune":  func() error { _, err := l.Prune(256); return err },
		} {
			if err := call(); !errors.Is(err, ErrClosed) {
				t.Errorf("%s after Close: %v", name, err)
			}
		}
		if err := l.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

func TestIndexCacheEviction(t *testing.T) {
	fsys := NewMemFS()
	build(t, fsys, "/log", 1000, 100)
	opt := opts(fsys, 999)
	opt.IndexCache = 1
	l, _ := mustOpen(t, "/log", opt)
	for round := range 3 {
		for _, v := range []uint64{3, 300, 600, 10, 900, 511} {
			r, err := l.Read(v + uint64(round))
			if err != nil {
				t.Fatal(err)
			}
			equalRecord(t, r, v+uint64(round))
		}
	}
	checkReads(t, l, 0, 1000)
}
