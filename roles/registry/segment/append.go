package segment

import (
	"fmt"
)

// sealedSeg is a segment closed for appending during one Append call.
type sealedSeg struct {
	first uint64
	offs  []int64
}

// Append writes recs, whose versions must run consecutively from Next(),
// and makes them durable: records go to the final segment, a new segment
// (header "RONRSEG1" + first version) starts at every multiple of
// SegmentRecords, each touched file is fsynced, and the directory is fsynced
// after a segment is created. The records become visible to Read, Scan and
// Next only after all of that succeeded. Bad input fails with ErrInvalid and
// writes nothing. Any I/O error breaks the log: this and every later Append
// fail with an error matching ErrBroken (the caller turns write-unready; Open
// recovers what persisted). Append must be called by one goroutine only.
func (l *Log) Append(recs []Record) error {
	if l.broken != nil {
		return fmt.Errorf("%w: %w", ErrBroken, l.broken)
	}
	l.mu.Lock()
	closed, next := l.closed, l.next
	l.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if err := validateBatch(recs, next); err != nil || len(recs) == 0 {
		return err
	}
	var sealed []sealedSeg
	var written int64
	for len(recs) > 0 {
		n := l.chunkLen(recs[0].Version, len(recs))
		s, w, err := l.writeChunk(recs[:n])
		if err != nil {
			l.broken = err
			return fmt.Errorf("%w: %w", ErrBroken, err)
		}
		sealed = append(sealed, s...)
		written += w
		recs = recs[n:]
	}
	l.publish(sealed, written)
	return nil
}

// validateBatch checks versions run from next and every record frames.
func validateBatch(recs []Record, next uint64) error {
	for i, r := range recs {
		if r.Version != next+uint64(i) {
			return fmt.Errorf("%w: record %d has version %d, want %d", ErrInvalid, i, r.Version, next+uint64(i))
		}
		if err := r.validate(); err != nil {
			return err
		}
	}
	return nil
}

// chunkLen is how many of n records starting at version v fit before the
// next segment boundary.
func (l *Log) chunkLen(v uint64, n int) int {
	room := l.sr - v%l.sr
	return int(min(room, uint64(n)))
}

// writeChunk appends records that all belong to one segment, rolling to a
// new segment first when they start one. It returns the segment it sealed,
// if any, and the bytes it wrote.
func (l *Log) writeChunk(recs []Record) ([]sealedSeg, int64, error) {
	v := recs[0].Version
	var sealed []sealedSeg
	fresh := v%l.sr == 0 && (l.w == nil || l.wFirst != v)
	if fresh {
		s, err := l.roll(v)
		if err != nil {
			return nil, 0, err
		}
		sealed = s
	}
	if l.w == nil {
		return nil, 0, fmt.Errorf("segment: no open segment for version %d", v)
	}
	l.buf = l.buf[:0]
	if fresh {
		l.buf = appendHeader(l.buf, v)
	}
	end := l.wOffs[len(l.wOffs)-1]
	for _, r := range recs {
		l.buf = EncodeRecord(l.buf, r)
		end += int64(r.encodedLen())
		l.wOffs = append(l.wOffs, end)
	}
	if err := l.w.Append(l.buf); err != nil {
		return nil, 0, fmt.Errorf("segment: write %s: %w", SegmentName(l.wFirst), err)
	}
	if err := l.w.Sync(); err != nil {
		return nil, 0, fmt.Errorf("segment: sync %s: %w", SegmentName(l.wFirst), err)
	}
	if fresh {
		if err := l.fs.SyncDir(l.dir); err != nil {
			return nil, 0, fmt.Errorf("segment: sync %s: %w", l.dir, err)
		}
	}
	written := int64(len(l.buf))
	if cap(l.buf) > maxKeptBuf {
		l.buf = nil // do not pin the memory of one huge batch
	}
	return sealed, written, nil
}

// maxKeptBuf is the largest encode buffer kept between appends.
const maxKeptBuf = 1 << 20

// roll closes the current segment and creates the one starting at first.
func (l *Log) roll(first uint64) ([]sealedSeg, error) {
	var sealed []sealedSeg
	if l.w != nil {
		sealed = append(sealed, sealedSeg{first: l.wFirst, offs: l.wOffs})
		if err := l.closeWriter(); err != nil {
			return nil, fmt.Errorf("segment: close %s: %w", SegmentName(l.wFirst), err)
		}
	}
	w, err := l.fs.Create(l.path(first))
	if err != nil {
		return nil, fmt.Errorf("segment: create %s: %w", SegmentName(first), err)
	}
	l.w, l.wFirst = w, first
	l.wOffs = make([]int64, 1, l.sr+1)
	l.wOffs[0] = HeaderSize
	return sealed, nil
}

// publish makes the appended records visible: it updates the segment list,
// the final segment's offsets, Next and the byte count, and caches the
// indexes of segments sealed on the way.
func (l *Log) publish(sealed []sealedSeg, written int64) {
	for _, s := range sealed {
		l.indexes.Add(s.first, &segIndex{offs: s.offs})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range sealed {
		l.setMeta(s.first, s.offs)
	}
	l.setMeta(l.wFirst, l.wOffs)
	l.final = l.wOffs
	l.next = l.wFirst + uint64(len(l.wOffs)-1)
	l.bytes += written
}

// setMeta records a segment's record count and size, adding it to the list
// when it is new. l.mu must be held.
func (l *Log) setMeta(first uint64, offs []int64) {
	m := segMeta{first: first, records: len(offs) - 1, bytes: offs[len(offs)-1]}
	if n := len(l.segs); n > 0 && l.segs[n-1].first == first {
		l.segs[n-1] = m
		return
	}
	l.segs = append(l.segs, m)
}
