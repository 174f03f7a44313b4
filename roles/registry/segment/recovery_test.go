package segment

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// tornBase is a log whose final segment (256) ends with record last.
type tornBase struct {
	last       uint64
	final      []byte // bytes of seg 256
	start, end int64  // byte range of record last in it
}

// newTornBase builds a log of n records (256 < n ≤ 512).
func newTornBase(t *testing.T, fsys FS, dir string, n int) tornBase {
	t.Helper()
	build(t, fsys, dir, n, 37)
	last := uint64(n - 1)
	l, _ := mustOpen(t, dir, opts(fsys, int64(last)))
	sp, err := l.locate(last, last)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	return tornBase{last: last, final: readAll(t, fsys, segPath(dir, 256)), start: sp.start, end: sp.end}
}

// mutation damages the last record from byte o of it on.
type mutation struct {
	name  string
	apply func(seg []byte, at int64) []byte
}

var mutations = []mutation{
	{"truncate", func(seg []byte, at int64) []byte { return seg[:at] }},
	{"zero-fill", func(seg []byte, at int64) []byte {
		clear(seg[at:])
		return seg
	}},
	{"corrupt", func(seg []byte, at int64) []byte {
		seg[at] ^= 0x5a
		return seg
	}},
}

// TestTornTailEveryByte damages the last record at every byte offset, three
// ways: above the durable head it is cut back to the previous record, at the
// durable head Open fails and cuts nothing.
func TestTornTailEveryByte(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys FS, dir string) {
		base := newTornBase(t, fsys, dir, 292) // record 291 is short: fewer cases
		for _, m := range mutations {
			for o := int64(0); o < base.end-base.start; o++ {
				seg := m.apply(slices.Clone(base.final), base.start+o)
				clean := m.name == "truncate" && o == 0
				for _, head := range []int64{int64(base.last) - 1, int64(base.last)} {
					writeAll(t, fsys, segPath(dir, 256), seg)
					name := fmt.Sprintf("%s@%d/head%d", m.name, o, head)
					checkTorn(t, name, fsys, dir, base, int64(len(seg)), head, clean)
				}
			}
		}
	})
}

func checkTorn(t *testing.T, name string, fsys FS, dir string, base tornBase, size, head int64, clean bool) {
	t.Helper()
	l, rec, err := Open(dir, opts(fsys, head))
	if head == int64(base.last) {
		if err == nil {
			l.Close()
			t.Fatalf("%s: Open succeeded, want a fatal error", name)
		}
		wantFatal(t, name, err, SegmentName(256), fmt.Sprintf("offset %d", base.start), fmt.Sprintf("version %d", base.last))
		if got := readAll(t, fsys, segPath(dir, 256)); int64(len(got)) != size {
			t.Fatalf("%s: fatal recovery changed the segment to %d bytes", name, len(got))
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: Open: %v", name, err)
	}
	defer l.Close()
	wantKind, wantCut := KindTornTail, size-base.start
	if clean {
		wantKind, wantCut = KindClean, 0
	}
	if rec.Kind != wantKind || rec.Truncated != wantCut || len(rec.Beyond) != 0 || l.Next() != base.last {
		t.Fatalf("%s: recovery %+v next %d, want %s cutting %d", name, rec, l.Next(), wantKind, wantCut)
	}
	if got := readAll(t, fsys, segPath(dir, 256)); !bytes.Equal(got, base.final[:base.start]) {
		t.Fatalf("%s: segment is %d bytes after recovery, want %d", name, len(got), base.start)
	}
	if err := l.Append(records(base.last, 1)); err != nil {
		t.Fatalf("%s: Append after recovery: %v", name, err)
	}
	checkReads(t, l, base.last-9, base.last+1)
}

// wantFatal checks err is a recovery failure whose text names every part.
func wantFatal(t *testing.T, name string, err error, parts ...string) {
	t.Helper()
	if !errors.Is(err, ErrRecovery) {
		t.Fatalf("%s: error %v is not ErrRecovery", name, err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("%s: error %q does not name %q", name, err, p)
		}
	}
}

// TestFinalSegmentTails covers tails that are not byte damage: a failing
// artifact check, a wrong version, stray records and torn headers.
func TestFinalSegmentTails(t *testing.T) {
	forge := func(v uint64) []byte { return EncodeRecord(nil, record(v)) }
	cases := []struct {
		name    string
		edit    func(seg []byte, b tornBase) []byte
		check   func(uint64, []byte) error
		head    int64
		next    uint64 // 0: fatal
		cut     func(seg []byte, b tornBase) int64
		parts   []string
		beyond  int
		removed bool
		kind    string
	}{
		{name: "check fails on last above head", head: 298, next: 299,
			check: rejectVersion(299), cut: fromStart, edit: keep},
		{name: "check fails on last at head", head: 299, check: rejectVersion(299), edit: keep,
			parts: []string{"version 299", "artifact"}},
		{name: "check fails mid-segment", head: 270, next: 280, beyond: 9,
			check: rejectVersion(280), edit: keep,
			cut: func([]byte, tornBase) int64 { return recordsFrom(280, 20) }},
		{name: "wrong version", head: 298, next: 299, edit: func(seg []byte, b tornBase) []byte {
			return append(seg[:b.start], forge(300)...)
		}, cut: fromStart},
		{name: "wrong version at head", head: 299, parts: []string{"version 299", "version check"},
			edit: func(seg []byte, b tornBase) []byte { return append(seg[:b.start], forge(7)...) }},
		{name: "stray record after last", head: 299, next: 300, edit: func(seg []byte, b tornBase) []byte {
			return append(seg, forge(301)...)
		}, cut: func([]byte, tornBase) int64 { return int64(len(forge(301))) }},
		{name: "log ends below head", head: 305, edit: keep, parts: []string{"version 300", "durable head 305"}},
		{name: "torn header above head", head: 255, next: 256, beyond: 0, removed: true,
			edit: func(seg []byte, _ tornBase) []byte { return seg[:HeaderSize-1] },
			cut:  func([]byte, tornBase) int64 { return HeaderSize - 1 }, kind: KindTornTail},
		{name: "empty final file", head: 255, next: 256, removed: true,
			edit: func([]byte, tornBase) []byte { return nil }, cut: func([]byte, tornBase) int64 { return 0 }, kind: KindTornTail},
		{name: "bad magic at head", head: 256, parts: []string{"header", "magic"}, edit: func(seg []byte, _ tornBase) []byte {
			seg[0] = 'X'
			return seg
		}},
		{name: "header first mismatch", head: 299, parts: []string{"header", "first version 512"},
			edit: func(seg []byte, _ tornBase) []byte { return appendHeader(seg[:0], 512) }},
		{name: "header only", head: 255, next: 256, edit: func(seg []byte, _ tornBase) []byte { return seg[:HeaderSize] },
			cut: func([]byte, tornBase) int64 { return 0 }, kind: KindClean},
	}
	forEachFS(t, func(t *testing.T, fsys FS, dir string) {
		base := newTornBase(t, fsys, dir, 300)
		for _, c := range cases {
			seg := c.edit(slices.Clone(base.final), base)
			writeAll(t, fsys, segPath(dir, 256), seg)
			opt := opts(fsys, c.head)
			if c.check != nil {
				opt.Check = c.check
			}
			l, rec, err := Open(dir, opt)
			if c.next == 0 {
				if err == nil {
					l.Close()
					t.Fatalf("%s: Open succeeded", c.name)
				}
				wantFatal(t, c.name, err, c.parts...)
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			cut := c.cut(seg, base)
			if l.Next() != c.next || rec.Truncated != cut || len(rec.Beyond) != c.beyond {
				t.Fatalf("%s: next %d recovery %s cut %d beyond %d, want next %d cut %d beyond %d",
					c.name, l.Next(), rec.Kind, rec.Truncated, len(rec.Beyond), c.next, cut, c.beyond)
			}
			if c.removed && len(l.Segments()) != 1 {
				t.Fatalf("%s: torn segment kept: %+v", c.name, l.Segments())
			}
			if c.kind != "" && rec.Kind != c.kind {
				t.Fatalf("%s: kind %s, want %s", c.name, rec.Kind, c.kind)
			}
			appendAll(t, l, c.next, 320-int(c.next), 64)
			checkReads(t, l, 0, 320)
			l.Close()
		}
	})
}

func keep(seg []byte, _ tornBase) []byte { return seg }

// fromStart is the cut of a tail starting at the last record.
func fromStart(seg []byte, b tornBase) int64 { return int64(len(seg)) - b.start }

// recordsFrom is the encoded size of n test records from version v.
func recordsFrom(v uint64, n int) int64 {
	var size int64
	for _, r := range records(v, n) {
		size += int64(r.encodedLen())
	}
	return size
}

// rejectVersion is a Check that fails exactly on version bad.
func rejectVersion(bad uint64) func(uint64, []byte) error {
	return func(v uint64, art []byte) error {
		if v == bad {
			return fmt.Errorf("artifact %d rejected", v)
		}
		return checkArtifact(v, art)
	}
}
