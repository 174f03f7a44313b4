package segment

import (
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
)

// MemFS is an in-memory FS for amnesia mode and tests. Like POSIX, a handle
// keeps reading a file's data after the file is removed. Sync and SyncDir
// only check that their target exists. The zero value is not usable; call
// NewMemFS.
type MemFS struct {
	mu    sync.Mutex // guards files and dirs; held for map operations only
	files map[string]*memNode
	dirs  map[string]bool
}

var _ FS = (*MemFS)(nil)

// NewMemFS returns an empty in-memory file system.
func NewMemFS() *MemFS {
	return &MemFS{files: map[string]*memNode{}, dirs: map[string]bool{}}
}

// memNode is one file's bytes, shared by all its handles.
type memNode struct {
	mu   sync.RWMutex // guards data
	data []byte
}

func clean(p string) string { return filepath.Clean(p) }

func pathErr(op, path string, err error) error { return &fs.PathError{Op: op, Path: path, Err: err} }

// MkdirAll records dir and all its parents.
func (m *MemFS) MkdirAll(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for d := clean(dir); ; d = filepath.Dir(d) {
		if _, isFile := m.files[d]; isFile {
			return pathErr("mkdir", d, fs.ErrExist)
		}
		m.dirs[d] = true
		if parent := filepath.Dir(d); parent == d {
			return nil
		}
	}
}

// ReadDir lists the files directly inside dir (subdirectories included).
func (m *MemFS) ReadDir(dir string) ([]string, error) {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[dir] {
		return nil, pathErr("readdir", dir, fs.ErrNotExist)
	}
	var names []string
	add := func(p string) {
		if filepath.Dir(p) == dir && p != dir {
			names = append(names, filepath.Base(p))
		}
	}
	for p := range m.files {
		add(p)
	}
	for p := range m.dirs {
		add(p)
	}
	slices.Sort(names)
	return names, nil
}

// Create makes path exclusively; its directory must exist.
func (m *MemFS) Create(path string) (File, error) {
	path = clean(path)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[filepath.Dir(path)] {
		return nil, pathErr("create", path, fs.ErrNotExist)
	}
	if _, ok := m.files[path]; ok || m.dirs[path] {
		return nil, pathErr("create", path, fs.ErrExist)
	}
	n := &memNode{}
	m.files[path] = n
	return &memFile{fs: m, path: path, node: n, writable: true}, nil
}

// OpenAppend opens an existing file for read and append.
func (m *MemFS) OpenAppend(path string) (File, error) { return m.open(path, true) }

// OpenRead opens an existing file read-only.
func (m *MemFS) OpenRead(path string) (File, error) { return m.open(path, false) }

func (m *MemFS) open(path string, writable bool) (File, error) {
	path = clean(path)
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.files[path]
	if !ok {
		return nil, pathErr("open", path, fs.ErrNotExist)
	}
	return &memFile{fs: m, path: path, node: n, writable: writable}, nil
}

// Remove deletes a file; open handles keep its data.
func (m *MemFS) Remove(path string) error {
	path = clean(path)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[path]; !ok {
		return pathErr("remove", path, fs.ErrNotExist)
	}
	delete(m.files, path)
	return nil
}

// SyncDir succeeds when dir exists.
func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[clean(dir)] {
		return pathErr("sync", dir, fs.ErrNotExist)
	}
	return nil
}

// ReadFile returns a copy of a file's bytes (for tests and tooling).
func (m *MemFS) ReadFile(path string) ([]byte, error) {
	f, err := m.OpenRead(path)
	if err != nil {
		return nil, err
	}
	n := f.(*memFile).node
	n.mu.RLock()
	defer n.mu.RUnlock()
	return slices.Clone(n.data), nil
}

// WriteFile replaces (or creates) a file's bytes; its directory must exist.
func (m *MemFS) WriteFile(path string, data []byte) error {
	path = clean(path)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[filepath.Dir(path)] {
		return pathErr("write", path, fs.ErrNotExist)
	}
	m.files[path] = &memNode{data: slices.Clone(data)}
	return nil
}

// memFile is one handle on a memNode.
type memFile struct {
	fs       *MemFS
	path     string
	node     *memNode
	writable bool
	mu       sync.Mutex // guards closed
	closed   bool
}

func (f *memFile) usable(write bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.closed:
		return pathErr("use", f.path, fs.ErrClosed)
	case write && !f.writable:
		return pathErr("write", f.path, errReadOnly)
	}
	return nil
}

// ReadAt copies from the file's bytes; io.EOF when fewer than len(p) remain.
func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.usable(false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("read", f.path, fs.ErrInvalid)
	}
	f.node.mu.RLock()
	defer f.node.mu.RUnlock()
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Append adds p at the end.
func (f *memFile) Append(p []byte) error {
	if err := f.usable(true); err != nil {
		return err
	}
	f.node.mu.Lock()
	defer f.node.mu.Unlock()
	f.node.data = append(f.node.data, p...)
	return nil
}

// Truncate cuts (or zero-extends) the file to size bytes.
func (f *memFile) Truncate(size int64) error {
	if err := f.usable(true); err != nil {
		return err
	}
	if size < 0 {
		return pathErr("truncate", f.path, fs.ErrInvalid)
	}
	f.node.mu.Lock()
	defer f.node.mu.Unlock()
	if size <= int64(len(f.node.data)) {
		f.node.data = slices.Clip(f.node.data[:size])
	} else {
		f.node.data = append(f.node.data, make([]byte, size-int64(len(f.node.data)))...)
	}
	return nil
}

// Sync succeeds on an open handle.
func (f *memFile) Sync() error { return f.usable(false) }

// Size reports the file's length.
func (f *memFile) Size() (int64, error) {
	if err := f.usable(false); err != nil {
		return 0, err
	}
	f.node.mu.RLock()
	defer f.node.mu.RUnlock()
	return int64(len(f.node.data)), nil
}

// Close releases the handle; a second Close fails.
func (f *memFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return pathErr("close", f.path, fs.ErrClosed)
	}
	f.closed = true
	return nil
}
