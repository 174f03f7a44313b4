package segment

import (
	"errors"
	"fmt"
	"testing"
)

// TestLayoutFatal: damage outside the final segment is never repaired.
func TestLayoutFatal(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(t *testing.T, fsys FS, dir string)
		opt   func(o *Options)
		parts []string
	}{
		{name: "gap between segments", parts: []string{SegmentName(512), "where " + SegmentName(256) + " was expected"},
			edit: func(t *testing.T, fsys FS, dir string) { mustRemove(t, fsys, segPath(dir, 256)) }},
		{name: "missing first segment", parts: []string{"where " + SegmentName(0) + " was expected"},
			edit: func(t *testing.T, fsys FS, dir string) { mustRemove(t, fsys, segPath(dir, 0)) }},
		{name: "misaligned segment", parts: []string{SegmentName(300)},
			edit: func(t *testing.T, fsys FS, dir string) { writeAll(t, fsys, segPath(dir, 300), appendHeader(nil, 300)) }},
		{name: "changed segment_records", parts: []string{"segment_records 512"},
			opt: func(o *Options) { o.SegmentRecords = 512 }},
		{name: "non-final bad magic", parts: []string{SegmentName(256), "header", "magic"},
			edit: func(t *testing.T, fsys FS, dir string) { editFile(t, fsys, segPath(dir, 256), 3, 'x') }},
		{name: "non-final wrong first", parts: []string{SegmentName(0), "first version 1"},
			edit: func(t *testing.T, fsys FS, dir string) { editFile(t, fsys, segPath(dir, 0), 15, 1) }},
		{name: "non-final short header", parts: []string{SegmentName(0), "header"},
			edit: func(t *testing.T, fsys FS, dir string) { writeAll(t, fsys, segPath(dir, 0), []byte("RONR")) }},
		{name: "non-final corrupt above head", parts: []string{SegmentName(256), "version 300", "crc"},
			opt:  func(o *Options) { o.DurableHead = 200 },
			edit: func(t *testing.T, fsys FS, dir string) { corruptRecord(t, fsys, dir, 300) }},
		{name: "non-final short above head", parts: []string{SegmentName(256), "holds 255 of 256"},
			opt: func(o *Options) { o.DurableHead = 200 },
			edit: func(t *testing.T, fsys FS, dir string) {
				seg := readAll(t, fsys, segPath(dir, 256))
				writeAll(t, fsys, segPath(dir, 256), seg[:int64(len(seg))-int64(record(511).encodedLen())])
			}},
		{name: "no segments with a head", parts: []string{"no segments"},
			edit: func(t *testing.T, fsys FS, dir string) {
				for _, f := range []uint64{0, 256, 512, 768} {
					mustRemove(t, fsys, segPath(dir, f))
				}
			}},
	}
	forEachFS(t, func(t *testing.T, fsys FS, base string) {
		build(t, fsys, base+"/base", 800, 200)
		for i, c := range cases {
			dir := fmt.Sprintf("%s/%d", base, i)
			cloneLog(t, fsys, base+"/base", dir)
			if c.edit != nil {
				c.edit(t, fsys, dir)
			}
			opt := opts(fsys, 799)
			if c.opt != nil {
				c.opt(&opt)
			}
			l, _, err := Open(dir, opt)
			if err == nil {
				l.Close()
				t.Fatalf("%s: Open succeeded", c.name)
			}
			wantFatal(t, c.name, err, c.parts...)
		}
	})
}

func mustRemove(t *testing.T, fsys FS, path string) {
	t.Helper()
	if err := fsys.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// editFile sets one byte of a file.
func editFile(t *testing.T, fsys FS, path string, at int, b byte) {
	t.Helper()
	seg := readAll(t, fsys, path)
	seg[at] = b
	writeAll(t, fsys, path, seg)
}

// corruptRecord flips a body byte of version v (the log must be closed).
func corruptRecord(t *testing.T, fsys FS, dir string, v uint64) int64 {
	t.Helper()
	l, _ := mustOpen(t, dir, Options{FS: fsys, SegmentRecords: 256, DurableHead: int64(v)})
	sp, err := l.locate(v, v)
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	seg := readAll(t, fsys, segPath(dir, sp.seg))
	seg[sp.start+RecordOverhead+9] ^= 0xff
	writeAll(t, fsys, segPath(dir, sp.seg), seg)
	return sp.start
}

func TestMinIndexAtOpen(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys FS, dir string) {
		build(t, fsys, dir, 800, 100)
		opt := opts(fsys, 799)
		opt.MinIndex = 600
		l, rec := mustOpen(t, dir, opt)
		if rec.Kind != KindClean || rec.Removed != 2 || l.MinIndex() != 600 {
			t.Fatalf("recovery %+v min %d", rec, l.MinIndex())
		}
		for _, f := range []uint64{0, 256} {
			if _, err := fsys.OpenRead(segPath(dir, f)); err == nil {
				t.Fatalf("%s survived", SegmentName(f))
			}
		}
		if segs := l.Segments(); len(segs) != 2 || segs[0].First != 512 {
			t.Fatalf("segments %+v", segs)
		}
		for _, v := range []uint64{0, 300, 599} {
			if _, err := l.Read(v); !errors.Is(err, ErrPruned) {
				t.Fatalf("Read(%d) = %v, want ErrPruned", v, err)
			}
		}
		if err := l.Scan(599, 700, func(Record) error { return nil }); !errors.Is(err, ErrPruned) {
			t.Fatalf("Scan from 599: %v", err)
		}
		checkReads(t, l, 600, 800)
	})
}

func TestRollForward(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys FS, dir string) {
		build(t, fsys, dir, 600, 50)
		for _, head := range []int64{-1, 0, 200, 255, 256, 598, 599} {
			l, rec := mustOpen(t, dir, opts(fsys, head))
			want := 599 - head
			if len(rec.Beyond) != int(want) {
				t.Fatalf("head %d: %d records beyond, want %d", head, len(rec.Beyond), want)
			}
			for i, r := range rec.Beyond {
				equalRecord(t, r, uint64(head+1)+uint64(i))
			}
			wantKind := KindRollForward
			if want == 0 {
				wantKind = KindClean
			}
			if rec.Kind != wantKind || rec.Truncated != 0 {
				t.Fatalf("head %d: recovery %s cut %d", head, rec.Kind, rec.Truncated)
			}
			checkReads(t, l, 0, 600)
			l.Close()
		}
	})
}

func TestRollForwardWithTornTail(t *testing.T) {
	fsys := NewMemFS()
	build(t, fsys, "/log", 300, 300)
	seg := readAll(t, fsys, segPath("/log", 256))
	writeAll(t, fsys, segPath("/log", 256), seg[:len(seg)-3])
	l, rec := mustOpen(t, "/log", opts(fsys, 290))
	kinds := rec.Kinds()
	if rec.Kind != KindTornTail || len(kinds) != 2 || kinds[1] != KindRollForward || len(rec.Beyond) != 8 || l.Next() != 299 {
		t.Fatalf("recovery %v beyond %d next %d", kinds, len(rec.Beyond), l.Next())
	}
}

// TestSealedDamageOnRead: damage in a non-final segment at or below the
// head is left to readers (the deep verifier), which see it at its version.
func TestSealedDamageOnRead(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys FS, dir string) {
		build(t, fsys, dir, 600, 600)
		off := corruptRecord(t, fsys, dir, 10)
		seg := readAll(t, fsys, segPath(dir, 256))
		cut := corruptCut(t, fsys, dir, 400)
		writeAll(t, fsys, segPath(dir, 256), seg[:cut])
		l, _ := mustOpen(t, dir, opts(fsys, 599))
		var ce *CorruptError
		if _, err := l.Read(10); !errors.As(err, &ce) || ce.Check != CheckCRC || ce.Version != 10 || ce.Offset != off || ce.Segment != SegmentName(0) {
			t.Fatalf("Read(10) = %v", err)
		}
		checkReads(t, l, 11, 400)
		if _, err := l.Read(450); !errors.As(err, &ce) || ce.Check != CheckTruncated || ce.Version != 400 {
			t.Fatalf("Read(450) = %v", err)
		}
		n := 0
		err := l.Scan(300, 500, func(Record) error { n++; return nil })
		if !errors.Is(err, ErrCorrupt) || n != 100 {
			t.Fatalf("Scan delivered %d then %v", n, err)
		}
		checkReads(t, l, 512, 600)
	})
}

// corruptCut returns the offset of version v in the closed log.
func corruptCut(t *testing.T, fsys FS, dir string, v uint64) int64 {
	t.Helper()
	l, _ := mustOpen(t, dir, Options{FS: fsys, SegmentRecords: 256, DurableHead: int64(v)})
	defer l.Close()
	sp, err := l.locate(v, v)
	if err != nil {
		t.Fatal(err)
	}
	return sp.start + 5
}

// cloneLog copies the segment files of from into a new directory to.
func cloneLog(t *testing.T, fsys FS, from, to string) {
	t.Helper()
	if err := fsys.MkdirAll(to); err != nil {
		t.Fatal(err)
	}
	names, err := fsys.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		writeAll(t, fsys, to+"/"+n, readAll(t, fsys, from+"/"+n))
	}
}
