package segment

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// recordReader walks the records of one segment file sequentially.
type recordReader struct {
	r    *bufio.Reader
	name string
	off  int64 // offset of the next record
	head [RecordOverhead]byte
}

// newRecordReader reads the bytes [start, end) of f, a file named name.
func newRecordReader(f File, name string, start, end int64) *recordReader {
	sr := io.NewSectionReader(f, start, end-start)
	return &recordReader{r: bufio.NewReaderSize(sr, 64<<10), name: name, off: start}
}

// frame reads the next record's frame. It returns io.EOF at a clean end, a
// positioned *CorruptError for damage, or the I/O error.
func (rr *recordReader) frame(v uint64) (int, uint32, error) {
	if _, err := io.ReadFull(rr.r, rr.head[:]); err != nil {
		if err == io.EOF {
			return 0, 0, io.EOF // nothing left: a clean end
		}
		return 0, 0, rr.fault(err, v)
	}
	n, sum, err := parseFrame(rr.head[:])
	if err != nil {
		return 0, 0, rr.fault(err, v)
	}
	return n, sum, nil
}

// next reads, checks and returns the record due to carry version v. The
// returned record owns its memory.
func (rr *recordReader) next(v uint64) (Record, error) {
	n, sum, err := rr.frame(v)
	if err != nil {
		return Record{}, err
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(rr.r, body); err != nil {
		return Record{}, rr.fault(err, v)
	}
	rec, err := decodeBody(body, sum)
	if err == nil && rec.Version != v {
		err = &CorruptError{Check: CheckVersion, Detail: fmt.Sprintf("record carries version %d", rec.Version)}
	}
	if err != nil {
		return Record{}, rr.fault(err, v)
	}
	rr.off += int64(RecordOverhead + n)
	return rec, nil
}

// skip steps over the record due to carry version v, checking only its
// framing (length bounds and completeness).
func (rr *recordReader) skip(v uint64) error {
	n, _, err := rr.frame(v)
	if err != nil {
		return err
	}
	if _, err := rr.r.Discard(n); err != nil {
		return rr.fault(err, v)
	}
	rr.off += int64(RecordOverhead + n)
	return nil
}

// fault turns a failure inside the current record into a positioned
// *CorruptError (an early end of file is CheckTruncated) or returns the I/O
// error itself.
func (rr *recordReader) fault(err error, v uint64) error {
	var ce *CorruptError
	switch {
	case errors.As(err, &ce):
		return ce.placed(rr.name, rr.off, v)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return (&CorruptError{Check: CheckTruncated}).placed(rr.name, rr.off, v)
	}
	return err
}
