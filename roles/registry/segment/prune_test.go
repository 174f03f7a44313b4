package segment

import (
	"errors"
	"testing"
)

func TestPrune(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys FS, dir string) {
		build(t, fsys, dir, 1024, 128)
		l, _ := mustOpen(t, dir, opts(fsys, 1023))
		before := l.Bytes()
		checkPrune(t, l, 600, 2, 512)
		if _, err := l.Read(599); !errors.Is(err, ErrPruned) {
			t.Fatalf("Read(599) = %v", err)
		}
		checkReads(t, l, 600, 1024)
		if l.Bytes() >= before {
			t.Fatalf("Bytes %d not below %d", l.Bytes(), before)
		}
		checkPrune(t, l, 100, 0, 512) // never lowers min_index
		if l.MinIndex() != 600 {
			t.Fatalf("min_index lowered to %d", l.MinIndex())
		}
		if _, err := l.Prune(1024); !errors.Is(err, ErrInvalid) {
			t.Fatalf("Prune past the last version: %v", err)
		}
		// The final segment is full and holds the last record: it stays.
		checkPrune(t, l, 1023, 1, 768)
		checkReads(t, l, 1023, 1024)
		for _, f := range []uint64{0, 256, 512} {
			if _, err := fsys.OpenRead(segPath(dir, f)); err == nil {
				t.Fatalf("%s survived Prune", SegmentName(f))
			}
		}
		appendAll(t, l, 1024, 10, 10)
		checkPrune(t, l, 1030, 1, 1024)
		l.Close()

		opt := opts(fsys, 1033)
		opt.MinIndex = 1030
		l2, rec := mustOpen(t, dir, opt)
		if rec.Kind != KindClean || rec.Removed != 0 {
			t.Fatalf("reopen after prune: %+v", rec)
		}
		checkReads(t, l2, 1030, 1034)
	})
}

func checkPrune(t *testing.T, l *Log, minIndex uint64, removed int, first uint64) {
	t.Helper()
	n, err := l.Prune(minIndex)
	if err != nil || n != removed {
		t.Fatalf("Prune(%d) = %d, %v; want %d", minIndex, n, err, removed)
	}
	if segs := l.Segments(); segs[0].First != first {
		t.Fatalf("after Prune(%d) first segment %d, want %d", minIndex, segs[0].First, first)
	}
}

func TestPruneEmptyLog(t *testing.T) {
	l, _ := mustOpen(t, "/log", opts(NewMemFS(), -1))
	if n, err := l.Prune(0); n != 0 || err != nil {
		t.Fatalf("Prune(0) on empty log = %d, %v", n, err)
	}
	if _, err := l.Prune(1); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Prune(1) on empty log = %v", err)
	}
}

func TestPruneRemoveFailure(t *testing.T) {
	fsys := NewFaultFS(NewMemFS())
	build(t, fsys, "/log", 600, 600)
	l, _ := mustOpen(t, "/log", opts(fsys, 599))
	fsys.Inject(Fault{Op: OpRemove})
	if n, err := l.Prune(512); n != 2 || !errors.Is(err, ErrInjected) {
		t.Fatalf("Prune = %d, %v", n, err)
	}
	if _, err := l.Read(300); !errors.Is(err, ErrPruned) {
		t.Fatalf("Read below min_index = %v", err)
	}
	if err := l.Append(records(600, 1)); err != nil {
		t.Fatalf("a failed Prune broke appends: %v", err)
	}
	l.Close()
	opt := opts(fsys, 600)
	opt.MinIndex = 512
	if _, rec := mustOpen(t, "/log", opt); rec.Removed != 1 {
		t.Fatalf("Open did not delete the leftover segment: %+v", rec)
	}
}
