package segment

import (
	"errors"
	"io"
	"os"
	"slices"

	"github.com/ronhq/ron/store/durable"
)

// File is an open segment file. ReadAt may run concurrently with Append on
// another handle of the same file.
type File interface {
	io.ReaderAt
	// Append writes p at the end of the file; a short write is an error.
	Append(p []byte) error
	// Truncate cuts the file to size bytes.
	Truncate(size int64) error
	// Sync makes the file's contents durable.
	Sync() error
	// Size reports the current length in bytes.
	Size() (int64, error)
	Close() error
}

// FS is the small file-system surface the log needs. Implementations must be
// safe for concurrent use. Missing files are reported with errors matching
// fs.ErrNotExist; an existing file passed to Create matches fs.ErrExist.
type FS interface {
	// MkdirAll creates dir and its parents (0700 on disk).
	MkdirAll(dir string) error
	// ReadDir lists the names of the entries in dir, sorted.
	ReadDir(dir string) ([]string, error)
	// Create creates path exclusively (0600 on disk) for appending.
	Create(path string) (File, error)
	// OpenAppend opens an existing file for reading and appending.
	OpenAppend(path string) (File, error)
	// OpenRead opens an existing file read-only (Append and Truncate fail).
	OpenRead(path string) (File, error)
	// Remove deletes a file.
	Remove(path string) error
	// SyncDir makes the creation and removal of entries in dir durable.
	SyncDir(dir string) error
}

// OSFS is the real file system: directories 0700, files 0600, directory
// fsync through store/durable.
type OSFS struct{}

var _ FS = OSFS{}

// MkdirAll creates dir with mode 0700.
func (OSFS) MkdirAll(dir string) error { return os.MkdirAll(dir, 0o700) }

// ReadDir lists dir's entry names in sorted order.
func (OSFS) ReadDir(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	slices.Sort(names)
	return names, nil
}

// Create makes path exclusively with mode 0600, opened for read and append.
func (OSFS) Create(path string) (File, error) {
	return openOS(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL)
}

// OpenAppend opens an existing path for read and append.
func (OSFS) OpenAppend(path string) (File, error) { return openOS(path, os.O_RDWR|os.O_APPEND) }

// OpenRead opens an existing path read-only.
func (OSFS) OpenRead(path string) (File, error) { return openOS(path, os.O_RDONLY) }

// Remove deletes path.
func (OSFS) Remove(path string) error { return os.Remove(path) }

// SyncDir fsyncs dir.
func (OSFS) SyncDir(dir string) error { return durable.SyncDir(dir) }

func openOS(path string, flag int) (File, error) {
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// osFile adapts *os.File to File.
type osFile struct{ f *os.File }

func (o osFile) ReadAt(p []byte, off int64) (int, error) { return o.f.ReadAt(p, off) }
func (o osFile) Truncate(size int64) error               { return o.f.Truncate(size) }
func (o osFile) Sync() error                             { return o.f.Sync() }
func (o osFile) Close() error                            { return o.f.Close() }

func (o osFile) Append(p []byte) error {
	n, err := o.f.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return err
}

func (o osFile) Size() (int64, error) {
	st, err := o.f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// errReadOnly is returned when a read-only handle is written.
var errReadOnly = errors.New("segment: file opened read-only")
