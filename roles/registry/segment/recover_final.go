package segment

import (
	"errors"
	"fmt"
)

// recoverFinal scans the final segment, cuts a damaged tail that lies above
// the durable head, and publishes the segment as the one appends continue.
func (l *Log) recoverFinal(first uint64, opt Options, rec *Recovery) error {
	name := SegmentName(first)
	f, err := l.fs.OpenAppend(l.path(first))
	if err != nil {
		return fmt.Errorf("segment: open %s: %w", name, err)
	}
	size, h, err := readHeader(f)
	if err != nil {
		f.Close()
		return fmt.Errorf("segment: read %s: %w", name, err)
	}
	if ce := checkHeader(h, name, first); ce != nil {
		f.Close()
		return l.dropTornSegment(first, size, ce, opt.DurableHead, rec)
	}
	offs, err := l.scanRecords(f, first, size, opt, rec)
	var tail *CorruptError
	if err != nil && !errors.As(err, &tail) {
		f.Close()
		return fmt.Errorf("segment: scan %s: %w", name, err)
	}
	next, end := first+uint64(len(offs)-1), offs[len(offs)-1]
	if err := l.cutTail(f, first, offs, size, tail, opt.DurableHead, rec); err != nil {
		f.Close()
		return err
	}
	l.w, l.wFirst, l.wOffs, l.final = f, first, offs, offs
	l.segs = append(l.segs, segMeta{first: first, records: len(offs) - 1, bytes: end})
	l.bytes += end
	l.next = next
	return nil
}

// cutTail truncates the final segment after its valid records (offs, fsynced)
// when a tail starting there lies above the durable head. A tail at or below
// it, or a segment ending below it, is fatal.
func (l *Log) cutTail(f File, first uint64, offs []int64, size int64, tail *CorruptError, head int64, rec *Recovery) error {
	next, end := first+uint64(len(offs)-1), offs[len(offs)-1]
	if tail != nil && !above(next, head) {
		return fatal("tail at or below durable head %d (acknowledged data is never cut): %w", head, tail)
	}
	if !above(next, head) {
		return fatal("segment %s ends at offset %d before version %d, at or below durable head %d", SegmentName(first), end, next, head)
	}
	if tail == nil {
		return nil
	}
	if err := f.Truncate(end); err != nil {
		return fmt.Errorf("segment: truncate %s at %d: %w", tail.Segment, end, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("segment: sync %s: %w", tail.Segment, err)
	}
	rec.Truncated += size - end
	rec.cut = true
	return nil
}

// dropTornSegment removes a final segment whose header is damaged, when it
// lies wholly above the durable head; the previous segment becomes final.
func (l *Log) dropTornSegment(first uint64, size int64, ce *CorruptError, head int64, rec *Recovery) error {
	if !above(first, head) {
		return fatal("tail at or below durable head %d (acknowledged data is never cut): %w", head, ce)
	}
	if err := l.fs.Remove(l.path(first)); err != nil {
		return fmt.Errorf("segment: remove torn %s: %w", ce.Segment, err)
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return fmt.Errorf("segment: sync %s: %w", l.dir, err)
	}
	rec.Truncated += size
	rec.cut = true
	l.next = first
	return nil
}
