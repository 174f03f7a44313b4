package segment

import (
	"fmt"
	"path/filepath"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"
)

// Defaults and bounds for Options.
const (
	DefaultSegmentRecords = 1024
	MinSegmentRecords     = 256
	MaxSegmentRecords     = 65536
	DefaultIndexCache     = 64
)

// Options configure Open.
type Options struct {
	// FS is the file layer; nil means OSFS.
	FS FS
	// SegmentRecords is the number of versions per segment: a multiple of
	// 256 in 256–65536; 0 means 1024. It must not change for an existing
	// log (Open then reports the misaligned segments as a gap).
	SegmentRecords int
	// Check is "the artifact parses with the same version"; recovery runs it
	// on every record it scans. nil skips it.
	Check func(version uint64, artifact []byte) error
	// MinIndex is the durable min_index: segments wholly below it are
	// deleted at Open and versions below it read as ErrPruned.
	MinIndex uint64
	// DurableHead is HEAD in registry.db; -1 means none (empty registry).
	// MinIndex > 0 requires DurableHead ≥ MinIndex.
	DurableHead int64
	// IndexCache is how many sealed segments' offset indexes are cached;
	// 0 means 64.
	IndexCache int
}

func (o Options) withDefaults() (Options, error) {
	if o.FS == nil {
		o.FS = OSFS{}
	}
	if o.SegmentRecords == 0 {
		o.SegmentRecords = DefaultSegmentRecords
	}
	if o.IndexCache == 0 {
		o.IndexCache = DefaultIndexCache
	}
	switch sr := o.SegmentRecords; {
	case sr%256 != 0 || sr < MinSegmentRecords || sr > MaxSegmentRecords:
		return o, fmt.Errorf("%w: segment_records %d: want a multiple of 256 in %d–%d", ErrInvalid, sr, MinSegmentRecords, MaxSegmentRecords)
	case o.DurableHead < -1:
		return o, fmt.Errorf("%w: durable head %d", ErrInvalid, o.DurableHead)
	case o.MinIndex > 0 && (o.DurableHead < 0 || uint64(o.DurableHead) < o.MinIndex):
		return o, fmt.Errorf("%w: min_index %d above durable head %d", ErrInvalid, o.MinIndex, o.DurableHead)
	case o.IndexCache < 0:
		return o, fmt.Errorf("%w: index cache %d", ErrInvalid, o.IndexCache)
	}
	return o, nil
}

// SegmentInfo describes one segment file.
type SegmentInfo struct {
	First   uint64 // first version the segment holds
	Records int    // records it holds now
	Bytes   int64  // file size, header included
	Path    string
}

// segMeta is the published description of one segment.
type segMeta struct {
	first   uint64
	records int
	bytes   int64
}

// Log is an open segment log. See the package comment for which methods may
// run concurrently.
type Log struct {
	fs      FS
	dir     string
	sr      uint64
	indexes *lru.Cache[uint64, *segIndex] // sealed segments' offset indexes
	builds  singleflight.Group            // one index build per segment at a time

	// Owned by the appending goroutine (Append, Close); readers never touch
	// these.
	w      File    // final segment, open for appending; nil when none is open
	wFirst uint64  // first version of w
	wOffs  []int64 // offsets of w's records, then its end; cap sr+1
	broken error   // sticky I/O error
	buf    []byte  // encode buffer

	mu       sync.Mutex // guards the fields below; never held across I/O
	segs     []segMeta  // in version order
	final    []int64    // published prefix of wOffs for segs' last entry; nil when it is sealed
	next     uint64
	minIndex uint64
	bytes    int64
	closed   bool
}

// Open opens (creating if needed) the log in dir and runs recovery (registry
// docs/registry.md §5): it deletes segments wholly below MinIndex, requires the other
// non-final segments to be present, contiguous and well headed, scans the
// final segment, and truncates (and fsyncs) a damaged tail that starts above
// DurableHead. Damage it must not repair — a gap, a bad non-final header, a
// tail at or below DurableHead, or a log that ends below it — fails with an
// error matching ErrRecovery that names the segment file, offset, version and
// failed check. Valid records above DurableHead come back in Recovery.Beyond.
func Open(dir string, opt Options) (*Log, Recovery, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, Recovery{}, err
	}
	indexes, err := lru.New[uint64, *segIndex](opt.IndexCache)
	if err != nil {
		return nil, Recovery{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	l := &Log{fs: opt.FS, dir: dir, sr: uint64(opt.SegmentRecords), indexes: indexes, minIndex: opt.MinIndex}
	rec, err := l.recover(opt)
	if err != nil {
		l.closeWriter()
		return nil, Recovery{}, err
	}
	return l, rec, nil
}

// path is the full path of the segment starting at first.
func (l *Log) path(first uint64) string { return filepath.Join(l.dir, SegmentName(first)) }

// Next returns the next version to append (0 for an empty log).
func (l *Log) Next() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next
}

// MinIndex returns the current min_index (raised by Prune).
func (l *Log) MinIndex() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.minIndex
}

// Bytes returns the total size of all segment files.
func (l *Log) Bytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bytes
}

// Segments describes every segment, oldest first (for retention and
// metrics).
func (l *Log) Segments() []SegmentInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]SegmentInfo, len(l.segs))
	for i, m := range l.segs {
		out[i] = SegmentInfo{First: m.first, Records: m.records, Bytes: m.bytes, Path: l.path(m.first)}
	}
	return out
}

// Close closes the log: later Append, Read, Scan and Prune calls fail with
// ErrClosed. It is called by the appending goroutine; a second Close is a
// no-op.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	return l.closeWriter()
}

// closeWriter closes the append handle, if any.
func (l *Log) closeWriter() error {
	if l.w == nil {
		return nil
	}
	err := l.w.Close()
	l.w = nil
	return err
}
