package segment

import (
	"errors"
	"fmt"
	"io/fs"
)

// Prune raises min_index to minIndex (it never lowers it) and deletes the
// segments wholly below it, then fsyncs the directory. The caller must
// already have raised min_index durably. The segment holding the last record
// is never deleted, and minIndex may not exceed the last version. It returns
// how many segment files it deleted; a file already gone counts as deleted.
// Prune may run concurrently with Append and reads; a reader that resolved a
// deleted segment before the deletion still reads it (open handles survive
// unlinking) or gets ErrPruned.
func (l *Log) Prune(minIndex uint64) (int, error) {
	victims, err := l.raiseMinIndex(minIndex)
	if err != nil || len(victims) == 0 {
		return 0, err
	}
	var errs []error
	for _, first := range victims {
		l.indexes.Remove(first)
		if err := l.fs.Remove(l.path(first)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("segment: delete %s: %w", SegmentName(first), err))
		}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		errs = append(errs, fmt.Errorf("segment: sync %s: %w", l.dir, err))
	}
	return len(victims), errors.Join(errs...)
}

// raiseMinIndex updates min_index and unlinks the doomed segments from the
// published list, returning their first versions.
func (l *Log) raiseMinIndex(minIndex uint64) ([]uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return nil, ErrClosed
	case minIndex <= l.minIndex:
		return nil, nil
	case minIndex >= l.next:
		return nil, fmt.Errorf("%w: min_index %d beyond the last version (next %d)", ErrInvalid, minIndex, l.next)
	}
	l.minIndex = minIndex
	n := 0
	for n < len(l.segs)-1 && l.segs[n].first+l.sr <= minIndex && l.segs[n].first+uint64(l.segs[n].records) < l.next {
		l.bytes -= l.segs[n].bytes
		n++
	}
	victims := make([]uint64, n)
	for i := range n {
		victims[i] = l.segs[i].first
	}
	l.segs = append([]segMeta(nil), l.segs[n:]...)
	return victims, nil
}
