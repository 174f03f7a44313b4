package segment

import (
	"errors"
	"fmt"
	"io"
)

// recoverSealed checks the headers of the non-final segments and fully
// scans those holding versions above the durable head.
func (l *Log) recoverSealed(firsts []uint64, opt Options, rec *Recovery) error {
	for _, first := range firsts {
		size, err := l.sealedHeader(first)
		if err != nil {
			return err
		}
		l.segs = append(l.segs, segMeta{first: first, records: int(l.sr), bytes: size})
		l.bytes += size
		if above(first+l.sr-1, opt.DurableHead) {
			if err := l.scanSealed(first, size, opt, rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// sealedHeader validates a non-final segment's header and returns its size.
func (l *Log) sealedHeader(first uint64) (int64, error) {
	f, err := l.fs.OpenRead(l.path(first))
	if err != nil {
		return 0, fmt.Errorf("segment: open %s: %w", SegmentName(first), err)
	}
	defer f.Close()
	size, h, err := readHeader(f)
	if err != nil {
		return 0, fmt.Errorf("segment: read %s: %w", SegmentName(first), err)
	}
	if ce := checkHeader(h, SegmentName(first), first); ce != nil {
		return 0, fatal("non-final %w", ce)
	}
	return size, nil
}

// readHeader returns a file's size and up to HeaderSize leading bytes.
func readHeader(f File) (int64, []byte, error) {
	size, err := f.Size()
	if err != nil {
		return 0, nil, err
	}
	h := make([]byte, min(size, HeaderSize))
	if _, err := f.ReadAt(h, 0); err != nil && !errors.Is(err, io.EOF) {
		return 0, nil, err
	}
	return size, h, nil
}

// scanSealed fully checks a non-final segment that holds versions above the
// durable head (a non-final segment is never torn, so damage is fatal),
// collects those versions and caches the segment's offset index.
func (l *Log) scanSealed(first uint64, size int64, opt Options, rec *Recovery) error {
	f, err := l.fs.OpenRead(l.path(first))
	if err != nil {
		return fmt.Errorf("segment: open %s: %w", SegmentName(first), err)
	}
	defer f.Close()
	offs, err := l.scanRecords(f, first, size, opt, rec)
	if err != nil {
		var ce *CorruptError
		if errors.As(err, &ce) {
			return fatal("non-final %w", ce)
		}
		return err
	}
	if len(offs) != int(l.sr)+1 || offs[len(offs)-1] != size {
		ce := &CorruptError{Segment: SegmentName(first), Offset: offs[len(offs)-1], Version: first + uint64(len(offs)-1), Check: CheckTruncated,
			Detail: fmt.Sprintf("non-final segment holds %d of %d records in %d bytes", len(offs)-1, l.sr, size)}
		return fatal("%w", ce)
	}
	l.indexes.Add(first, &segIndex{offs: offs})
	return nil
}

// scanRecords reads and fully checks the records of a segment from its
// header on, appending those above the durable head to rec.Beyond. It
// returns the offsets of the valid records plus the end of the last one, and
// the first failure (a positioned *CorruptError or an I/O error); a clean
// end of file or a full segment ends the scan without error.
func (l *Log) scanRecords(f File, first uint64, size int64, opt Options, rec *Recovery) ([]int64, error) {
	name := SegmentName(first)
	rr := newRecordReader(f, name, HeaderSize, size)
	offs := make([]int64, 1, l.sr+1)
	offs[0] = HeaderSize
	for v := first; v < first+l.sr; v++ {
		off := rr.off
		r, err := rr.next(v)
		if errors.Is(err, io.EOF) {
			return offs, nil
		}
		if err != nil {
			return offs, err
		}
		if opt.Check != nil {
			if cerr := opt.Check(v, r.Artifact); cerr != nil {
				return offs, &CorruptError{Segment: name, Offset: off, Version: v, Check: CheckArtifact, Detail: cerr.Error()}
			}
		}
		if above(v, opt.DurableHead) {
			rec.Beyond = append(rec.Beyond, r)
		}
		offs = append(offs, rr.off)
	}
	if end := offs[len(offs)-1]; end < size {
		return offs, &CorruptError{Segment: name, Offset: end, Version: first + l.sr, Check: CheckVersion,
			Detail: fmt.Sprintf("%d bytes after the segment's last record", size-end)}
	}
	return offs, nil
}
