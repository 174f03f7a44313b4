package segment

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// Recovery kinds (ron_registry_recoveries_total{kind}).
const (
	KindClean       = "clean"
	KindTornTail    = "torn_tail"
	KindRollForward = "roll_forward"
)

// Recovery reports what Open found and repaired.
type Recovery struct {
	// Kind is KindTornTail when bytes were cut, else KindRollForward when
	// Beyond is non-empty, else KindClean. Kinds lists every kind that
	// applies.
	Kind string
	// Truncated is the number of bytes cut from the final segment (its
	// whole size when its header was torn and the file removed; that counts
	// as torn_tail even for an empty file).
	Truncated int64
	// Beyond holds the valid records with Version > DurableHead, in order;
	// the caller rolls HEAD forward to them.
	Beyond []Record
	// Removed counts segments deleted for lying wholly below MinIndex.
	Removed int

	cut bool // a tail was cut or a torn final segment removed
}

// Kinds lists every recovery kind that applies: "clean" alone, or
// "torn_tail" and/or "roll_forward".
func (r Recovery) Kinds() []string {
	var out []string
	if r.cut || r.Truncated > 0 {
		out = append(out, KindTornTail)
	}
	if len(r.Beyond) > 0 {
		out = append(out, KindRollForward)
	}
	if out == nil {
		out = []string{KindClean}
	}
	return out
}

// above reports whether version v lies above the durable head.
func above(v uint64, head int64) bool { return head < 0 || v > uint64(head) }

// fatal wraps err as an unrecoverable recovery failure.
func fatal(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrRecovery}, args...)...)
}

// recover runs docs/registry.md §5 recovery and publishes the resulting state.
func (l *Log) recover(opt Options) (Recovery, error) {
	var rec Recovery
	firsts, err := l.listSegments()
	if err != nil {
		return rec, err
	}
	if firsts, rec.Removed, err = l.dropBelow(firsts, opt.MinIndex); err != nil {
		return rec, err
	}
	if len(firsts) == 0 {
		if opt.DurableHead >= 0 {
			return rec, fatal("durable head %d but %s holds no segments", opt.DurableHead, l.dir)
		}
		rec.Kind = KindClean
		return rec, nil
	}
	if err := l.checkLayout(firsts, opt.MinIndex); err != nil {
		return rec, err
	}
	if err := l.recoverSealed(firsts[:len(firsts)-1], opt, &rec); err != nil {
		return rec, err
	}
	if err := l.recoverFinal(firsts[len(firsts)-1], opt, &rec); err != nil {
		return rec, err
	}
	rec.Kind = rec.Kinds()[0]
	return rec, nil
}

// listSegments returns the first versions of the segment files, ascending,
// creating the directory (and fsyncing its parent) when it is missing.
// Entries not named like segments are ignored.
func (l *Log) listSegments() ([]uint64, error) {
	names, err := l.fs.ReadDir(l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, l.createDir()
	}
	if err != nil {
		return nil, fmt.Errorf("segment: list %s: %w", l.dir, err)
	}
	var firsts []uint64
	for _, n := range names {
		if v, ok := parseName(n); ok {
			firsts = append(firsts, v)
		}
	}
	return firsts, nil // ReadDir sorts; zero padding makes that numeric
}

// createDir makes the log directory durable.
func (l *Log) createDir() error {
	if err := l.fs.MkdirAll(l.dir); err != nil {
		return fmt.Errorf("segment: create %s: %w", l.dir, err)
	}
	if err := l.fs.SyncDir(filepath.Dir(l.dir)); err != nil {
		return fmt.Errorf("segment: sync parent of %s: %w", l.dir, err)
	}
	return nil
}

// dropBelow deletes the non-final segments wholly below minIndex and fsyncs
// the directory.
func (l *Log) dropBelow(firsts []uint64, minIndex uint64) ([]uint64, int, error) {
	n := 0
	for n < len(firsts)-1 && firsts[n]+l.sr <= minIndex {
		if err := l.fs.Remove(l.path(firsts[n])); err != nil {
			return nil, 0, fmt.Errorf("segment: delete %s below min_index %d: %w", SegmentName(firsts[n]), minIndex, err)
		}
		n++
	}
	if n > 0 {
		if err := l.fs.SyncDir(l.dir); err != nil {
			return nil, 0, fmt.Errorf("segment: sync %s: %w", l.dir, err)
		}
	}
	return firsts[n:], n, nil
}

// checkLayout requires aligned, contiguous segments starting at min_index's
// segment.
func (l *Log) checkLayout(firsts []uint64, minIndex uint64) error {
	want := minIndex - minIndex%l.sr
	for _, f := range firsts {
		if f != want {
			return fatal("segment %s found where %s was expected (gap, misaligned segment or changed segment_records %d; min_index %d)",
				SegmentName(f), SegmentName(want), l.sr, minIndex)
		}
		want += l.sr
	}
	return nil
}
