package segment

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestOptionsValidation(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  Options
	}{
		{"records not multiple of 256", Options{SegmentRecords: 300}},
		{"records 255", Options{SegmentRecords: 255}},
		{"records negative", Options{SegmentRecords: -256}},
		{"records above max", Options{SegmentRecords: 65536 + 256}},
		{"head below -1", Options{DurableHead: -2}},
		{"min index without head", Options{DurableHead: -1, MinIndex: 256}},
		{"min index above head", Options{DurableHead: 100, MinIndex: 256}},
		{"negative index cache", Options{DurableHead: -1, IndexCache: -1}},
	} {
		c.opt.FS = NewMemFS()
		if _, _, err := Open("/log", c.opt); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", c.name, err)
		}
	}
	for _, sr := range []int{0, 256, 512, 65536} {
		l, _, err := Open("/log", Options{FS: NewMemFS(), SegmentRecords: sr, DurableHead: -1})
		if err != nil {
			t.Fatalf("records %d: %v", sr, err)
		}
		l.Close()
	}
}

func TestDefaultsUseOSFS(t *testing.T) {
	dir := t.TempDir() + "/log"
	l, _, err := Open(dir, Options{DurableHead: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(records(0, 3)); err != nil {
		t.Fatal(err)
	}
	if segs := l.Segments(); len(segs) != 1 || segs[0].Path != segPath(dir, 0) {
		t.Fatalf("segments %+v", segs)
	}
}

func TestAppendBadInput(t *testing.T) {
	l, _ := mustOpen(t, "/log", opts(NewMemFS(), -1))
	if err := l.Append(records(0, 10)); err != nil {
		t.Fatal(err)
	}
	big := Record{Version: 10, Artifact: make([]byte, MaxArtifact+1)}
	for _, c := range []struct {
		name string
		recs []Record
	}{
		{"version behind", records(9, 1)},
		{"version ahead", records(11, 1)},
		{"gap inside batch", append(records(10, 2), record(13))},
		{"corr_id too long", []Record{{Version: 10, CorrID: strings.Repeat("a", 65)}}},
		{"corr_id newline", []Record{{Version: 10, CorrID: "a\nb"}}},
		{"corr_id non-ASCII", []Record{{Version: 10, CorrID: "é"}}},
		{"corr_id NUL", []Record{{Version: 10, CorrID: "\x00"}}},
		{"artifact too large", []Record{big}},
		{"bad record late in batch", append(records(10, 3), Record{Version: 13, CorrID: "\x7f"})},
	} {
		if err := l.Append(c.recs); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", c.name, err)
		}
	}
	if l.Next() != 10 {
		t.Fatalf("bad input moved Next to %d", l.Next())
	}
	edge := []Record{
		{Version: 10, CorrID: strings.Repeat("~", MaxCorrID), Artifact: bytes.Repeat([]byte{'z'}, MaxArtifact)},
		{Version: 11},
	}
	if err := l.Append(edge); err != nil {
		t.Fatalf("limits: %v", err)
	}
	if err := l.Append(nil); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
	for _, want := range edge {
		got, err := l.Read(want.Version)
		if err != nil || got.CorrID != want.CorrID || !bytes.Equal(got.Artifact, want.Artifact) {
			t.Fatalf("Read(%d): %v", want.Version, err)
		}
	}
}

// TestStickyAppendError: an injected I/O failure breaks the log for good;
// reopening recovers what persisted.
func TestStickyAppendError(t *testing.T) {
	cases := []struct {
		name  string
		fault Fault
		batch int    // records in the failing Append, starting at 250
		next  uint64 // Next after reopening at durable head 249
		cut   int64
	}{
		{name: "fsync", fault: Fault{Op: OpSync}, batch: 3, next: 253},
		{name: "write", fault: Fault{Op: OpAppend}, batch: 3, next: 250},
		{name: "torn write", fault: Fault{Op: OpAppend, Partial: 30}, batch: 3, next: 250, cut: 30},
		{name: "create at boundary", fault: Fault{Op: OpCreate}, batch: 10, next: 256},
		{name: "dir fsync at boundary", fault: Fault{Op: OpSyncDir}, batch: 10, next: 260},
		{name: "second segment write", fault: Fault{Op: OpAppend, Match: SegmentName(256), Partial: 20}, batch: 10, next: 256,
			cut: 20 - HeaderSize},
	}
	forEachFS(t, func(t *testing.T, inner FS, dir string) {
		for _, c := range cases {
			d := dir + "/" + strings.ReplaceAll(c.name, " ", "-")
			fsys := NewFaultFS(inner)
			l, _ := mustOpen(t, d, opts(fsys, -1))
			appendAll(t, l, 0, 250, 50)
			fsys.Inject(c.fault)
			if err := l.Append(records(250, c.batch)); !errors.Is(err, ErrBroken) || !errors.Is(err, ErrInjected) {
				t.Fatalf("%s: failing Append = %v", c.name, err)
			}
			if l.Next() != 250 {
				t.Fatalf("%s: a failed Append published: next %d", c.name, l.Next())
			}
			fsys.Reset()
			if err := l.Append(records(250, 1)); !errors.Is(err, ErrBroken) {
				t.Fatalf("%s: Append after failure = %v, want ErrBroken", c.name, err)
			}
			checkReads(t, l, 0, 250)
			l.Close()

			l2, rec := mustOpen(t, d, opts(inner, 249))
			if l2.Next() != c.next || rec.Truncated != c.cut || len(rec.Beyond) != int(c.next-250) {
				t.Fatalf("%s: reopened next %d kind %s cut %d beyond %d, want next %d cut %d",
					c.name, l2.Next(), rec.Kind, rec.Truncated, len(rec.Beyond), c.next, c.cut)
			}
			appendAll(t, l2, c.next, int(270-c.next), 7)
			checkReads(t, l2, 0, 270)
			l2.Close()
		}
	})
}

func TestFaultFSCounts(t *testing.T) {
	fsys := NewFaultFS(NewMemFS())
	fsys.Inject(Fault{Op: OpSync, After: 2, Sticky: true, Err: errors.New("disk gone")})
	l, _ := mustOpen(t, "/log", opts(fsys, -1))
	for v := range uint64(2) {
		if err := l.Append(records(v, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Append(records(2, 1)); err == nil || !strings.Contains(err.Error(), "disk gone") {
		t.Fatalf("third sync: %v", err)
	}
	if n := fsys.Calls(OpSync); n != 3 {
		t.Fatalf("sync calls %d", n)
	}
	if _, _, err := Open("/log2", opts(fsys, -1)); err != nil {
		t.Fatalf("Open with no sync: %v", err)
	}
	f, err := fsys.Create("/log2/x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err == nil {
		t.Fatal("sticky fault did not fire again")
	}
}
