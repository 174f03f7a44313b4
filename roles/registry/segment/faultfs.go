package segment

import (
	"errors"
	"strings"
	"sync"
)

// ErrInjected is the default error a FaultFS fault returns.
var ErrInjected = errors.New("segment: injected fault")

// Op names an operation a FaultFS can fail.
type Op string

// Fault-injectable operations.
const (
	OpMkdir    Op = "mkdir"
	OpReadDir  Op = "readdir"
	OpCreate   Op = "create"
	OpOpen     Op = "open" // OpenAppend and OpenRead
	OpRemove   Op = "remove"
	OpSyncDir  Op = "syncdir"
	OpRead     Op = "read"
	OpAppend   Op = "append"
	OpTruncate Op = "truncate"
	OpSync     Op = "sync"
)

// Fault is one injected failure: the (After+1)-th call of Op on a path that
// contains Match fails with Err (ErrInjected when nil). With Sticky, every
// later matching call fails too. For OpAppend, the first Partial bytes of
// the failing write still land in the file (a torn write).
type Fault struct {
	Op      Op
	Match   string
	After   int
	Partial int
	Sticky  bool
	Err     error
}

// FaultFS wraps an FS and fails chosen operations, for crash and
// error-path tests. It is safe for concurrent use.
type FaultFS struct {
	inner  FS
	mu     sync.Mutex // guards faults and calls; never held across inner calls
	faults []*faultState
	calls  map[Op]int
}

type faultState struct {
	Fault
	seen  int
	fired bool
}

var _ FS = (*FaultFS)(nil)

// NewFaultFS wraps inner with no faults armed.
func NewFaultFS(inner FS) *FaultFS { return &FaultFS{inner: inner, calls: map[Op]int{}} }

// Inject arms f.
func (x *FaultFS) Inject(f Fault) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.faults = append(x.faults, &faultState{Fault: f})
}

// Reset disarms every fault.
func (x *FaultFS) Reset() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.faults = nil
}

// Calls reports how many times op was attempted.
func (x *FaultFS) Calls(op Op) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.calls[op]
}

// hit counts a call and returns the fault that fails it, if any.
func (x *FaultFS) hit(op Op, path string) *Fault {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.calls[op]++
	for _, f := range x.faults {
		if f.Op != op || !strings.Contains(path, f.Match) {
			continue
		}
		if f.fired && f.Sticky {
			return &f.Fault
		}
		if f.fired {
			continue
		}
		if f.seen < f.After {
			f.seen++
			continue
		}
		f.fired = true
		return &f.Fault
	}
	return nil
}

func (x *FaultFS) fail(op Op, path string) error {
	if f := x.hit(op, path); f != nil {
		return f.err()
	}
	return nil
}

func (f *Fault) err() error {
	if f.Err != nil {
		return f.Err
	}
	return ErrInjected
}

// MkdirAll forwards unless OpMkdir fails.
func (x *FaultFS) MkdirAll(dir string) error {
	if err := x.fail(OpMkdir, dir); err != nil {
		return err
	}
	return x.inner.MkdirAll(dir)
}

// ReadDir forwards unless OpReadDir fails.
func (x *FaultFS) ReadDir(dir string) ([]string, error) {
	if err := x.fail(OpReadDir, dir); err != nil {
		return nil, err
	}
	return x.inner.ReadDir(dir)
}

// Create forwards unless OpCreate fails.
func (x *FaultFS) Create(path string) (File, error) {
	if err := x.fail(OpCreate, path); err != nil {
		return nil, err
	}
	f, err := x.inner.Create(path)
	return x.wrap(f, err, path)
}

// OpenAppend forwards unless OpOpen fails.
func (x *FaultFS) OpenAppend(path string) (File, error) {
	if err := x.fail(OpOpen, path); err != nil {
		return nil, err
	}
	f, err := x.inner.OpenAppend(path)
	return x.wrap(f, err, path)
}

// OpenRead forwards unless OpOpen fails.
func (x *FaultFS) OpenRead(path string) (File, error) {
	if err := x.fail(OpOpen, path); err != nil {
		return nil, err
	}
	f, err := x.inner.OpenRead(path)
	return x.wrap(f, err, path)
}

// Remove forwards unless OpRemove fails.
func (x *FaultFS) Remove(path string) error {
	if err := x.fail(OpRemove, path); err != nil {
		return err
	}
	return x.inner.Remove(path)
}

// SyncDir forwards unless OpSyncDir fails.
func (x *FaultFS) SyncDir(dir string) error {
	if err := x.fail(OpSyncDir, dir); err != nil {
		return err
	}
	return x.inner.SyncDir(dir)
}

// wrap routes an opened handle's operations through x.
func (x *FaultFS) wrap(f File, err error, path string) (File, error) {
	if err != nil {
		return nil, err
	}
	return &faultFile{File: f, fs: x, path: path}, nil
}

// faultFile routes a handle's operations through its FaultFS.
type faultFile struct {
	File
	fs   *FaultFS
	path string
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.fail(OpRead, f.path); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *faultFile) Append(p []byte) error {
	ft := f.fs.hit(OpAppend, f.path)
	if ft == nil {
		return f.File.Append(p)
	}
	if n := min(ft.Partial, len(p)); n > 0 {
		if err := f.File.Append(p[:n]); err != nil {
			return err
		}
	}
	return ft.err()
}

func (f *faultFile) Truncate(size int64) error {
	if err := f.fs.fail(OpTruncate, f.path); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

func (f *faultFile) Sync() error {
	if err := f.fs.fail(OpSync, f.path); err != nil {
		return err
	}
	return f.File.Sync()
}
