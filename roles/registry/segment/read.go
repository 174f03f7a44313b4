package segment

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strconv"
)

// segIndex is a sealed segment's record offsets: offs[i] is where version
// first+i starts and the last entry is where the last good record ends. bad
// describes why the record after the good ones could not be framed (nil when
// the segment is whole).
type segIndex struct {
	offs []int64
	bad  *CorruptError
}

// span is a run of consecutive records inside one segment file.
type span struct {
	seg         uint64 // the segment's first version
	first, last uint64 // versions covered
	start, end  int64  // byte range
}

// Read returns the record holding version v: ErrNotFound at or above Next(),
// ErrPruned below min_index, a *CorruptError when its bytes fail the CRC,
// framing or version check. It may run concurrently with Append.
func (l *Log) Read(v uint64) (Record, error) {
	sp, err := l.locate(v, v)
	if err != nil {
		return Record{}, err
	}
	f, err := l.openRead(sp.seg, v)
	if err != nil {
		return Record{}, err
	}
	defer f.Close()
	buf := make([]byte, sp.end-sp.start)
	if n, err := f.ReadAt(buf, sp.start); n < len(buf) {
		if err == nil || errors.Is(err, io.EOF) {
			err = (&CorruptError{Check: CheckTruncated}).placed(SegmentName(sp.seg), sp.start, v)
		}
		return Record{}, err
	}
	rec, n, err := DecodeRecord(buf)
	if err == nil && (n != len(buf) || rec.Version != v) {
		err = &CorruptError{Check: CheckVersion, Detail: fmt.Sprintf("record carries version %d in %d bytes", rec.Version, n)}
	}
	var ce *CorruptError
	if errors.As(err, &ce) {
		return Record{}, ce.placed(SegmentName(sp.seg), sp.start, v)
	}
	return rec, err
}

// Scan calls fn with each record from version from to version to
// (inclusive), in order, stopping at fn's first error, which it returns.
// Errors are as for Read; the range is checked against Next() and min_index
// before fn is first called. It may run concurrently with Append; a
// concurrent Prune can end it early with ErrPruned.
func (l *Log) Scan(from, to uint64, fn func(Record) error) error {
	if from > to {
		return fmt.Errorf("%w: scan from %d to %d", ErrInvalid, from, to)
	}
	for v := from; ; {
		sp, err := l.locate(v, to)
		if err != nil {
			return err
		}
		if err := l.scanSpan(sp, fn); err != nil {
			return err
		}
		if sp.last == to {
			return nil
		}
		v = sp.last + 1
	}
}

// scanSpan streams the records of sp to fn.
func (l *Log) scanSpan(sp span, fn func(Record) error) error {
	f, err := l.openRead(sp.seg, sp.first)
	if err != nil {
		return err
	}
	defer f.Close()
	rr := newRecordReader(f, SegmentName(sp.seg), sp.start, sp.end)
	for v := sp.first; v <= sp.last; v++ {
		rec, err := rr.next(v)
		if errors.Is(err, io.EOF) {
			err = (&CorruptError{Check: CheckTruncated}).placed(rr.name, rr.off, v)
		}
		if err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return nil
}

// locate finds the byte range of versions [from, to], clamped to the end of
// from's segment (and to the last well-framed record of a damaged one).
func (l *Log) locate(from, to uint64) (span, error) {
	sp, sealed, err := l.locatePublished(from, to)
	if err != nil || !sealed {
		return sp, err
	}
	idx, err := l.index(sp.seg, from)
	if err != nil {
		return span{}, err
	}
	return idx.span(sp.seg, from, sp.last)
}

// locatePublished resolves from's segment under l.mu. For the final
// segment it returns the full span; for a sealed one only seg and last, and
// sealed = true (its offsets come from the index, outside the lock).
func (l *Log) locatePublished(from, to uint64) (sp span, sealed bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return span{}, false, ErrClosed
	case to >= l.next:
		return span{}, false, fmt.Errorf("%w: version %d, next is %d", ErrNotFound, to, l.next)
	case from < l.minIndex:
		return span{}, false, fmt.Errorf("%w: version %d below min_index %d", ErrPruned, from, l.minIndex)
	}
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].first > from }) - 1
	if i < 0 {
		return span{}, false, fmt.Errorf("%w: version %d precedes the first segment", ErrPruned, from)
	}
	seg := l.segs[i].first
	sp = span{seg: seg, first: from, last: min(to, seg+l.sr-1)}
	if i < len(l.segs)-1 || l.final == nil {
		return sp, true, nil
	}
	sp.start, sp.end = l.final[from-seg], l.final[sp.last-seg+1]
	return sp, false, nil
}

// span cuts [from, last] out of a sealed segment's index, clamping last to
// the good records; a from past them returns the framing failure.
func (x *segIndex) span(seg, from, last uint64) (span, error) {
	good := uint64(len(x.offs) - 1)
	if from-seg >= good {
		return span{}, x.bad
	}
	last = min(last, seg+good-1)
	return span{seg: seg, first: from, last: last, start: x.offs[from-seg], end: x.offs[last-seg+1]}, nil
}

// index returns a sealed segment's offset index from the cache, building it
// once if missing. v is the version being read (for error mapping).
func (l *Log) index(seg, v uint64) (*segIndex, error) {
	if x, ok := l.indexes.Get(seg); ok {
		return x, nil
	}
	x, err, _ := l.builds.Do(strconv.FormatUint(seg, 10), func() (any, error) {
		if x, ok := l.indexes.Get(seg); ok {
			return x, nil
		}
		x, err := l.buildIndex(seg, v)
		if err != nil {
			return nil, err
		}
		l.indexes.Add(seg, x)
		return x, nil
	})
	if err != nil {
		return nil, err
	}
	return x.(*segIndex), nil
}

// buildIndex frames every record of a sealed segment (lengths only; Read and
// Scan check CRCs). Framing damage is recorded in the index, which is cached
// like a whole one; I/O errors are returned and nothing is cached.
func (l *Log) buildIndex(seg, v uint64) (*segIndex, error) {
	f, err := l.openRead(seg, v)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	name := SegmentName(seg)
	size, h, err := readHeader(f)
	if err != nil {
		return nil, fmt.Errorf("segment: read %s: %w", name, err)
	}
	x := &segIndex{offs: make([]int64, 1, l.sr+1)}
	x.offs[0] = HeaderSize
	if x.bad = checkHeader(h, name, seg); x.bad != nil {
		return x, nil
	}
	rr := newRecordReader(f, name, HeaderSize, size)
	for u := seg; u < seg+l.sr; u++ {
		err := rr.skip(u)
		if errors.Is(err, io.EOF) {
			err = (&CorruptError{Check: CheckTruncated}).placed(name, rr.off, u)
		}
		if errors.As(err, &x.bad) {
			return x, nil
		}
		if err != nil {
			return nil, fmt.Errorf("segment: read %s: %w", name, err)
		}
		x.offs = append(x.offs, rr.off)
	}
	return x, nil
}

// openRead opens a segment for reading; a file that vanished because Prune
// raised min_index past v reads as ErrPruned.
func (l *Log) openRead(seg, v uint64) (File, error) {
	f, err := l.fs.OpenRead(l.path(seg))
	if err == nil {
		return f, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if mi := l.MinIndex(); v < mi {
			return nil, fmt.Errorf("%w: version %d below min_index %d", ErrPruned, v, mi)
		}
	}
	return nil, fmt.Errorf("segment: open %s: %w", SegmentName(seg), err)
}
