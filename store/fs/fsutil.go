package fs

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

const (
	fileMode = 0o640
	dirMode  = 0o750
)

// errExists: the no-replace rename found the target present.
var errExists = errors.New("fs: target exists")

// renameNoReplace renames oldpath to newpath unless newpath exists
// (errExists). It uses renameat2(RENAME_NOREPLACE) and falls back to
// link + unlink where that is unsupported.
func renameNoReplace(oldpath, newpath string) error {
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST):
		return errExists
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EINVAL):
		return linkRename(oldpath, newpath)
	}
	return &os.LinkError{Op: "renameat2", Old: oldpath, New: newpath, Err: err}
}

// linkRename is the portable no-replace rename: link, then unlink the source.
func linkRename(oldpath, newpath string) error {
	if err := os.Link(oldpath, newpath); err != nil {
		if errors.Is(err, os.ErrExist) {
			return errExists
		}
		return err
	}
	return os.Remove(oldpath)
}

// syncDir fsyncs a directory so that entries created or removed in it are
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// mkdirSynced creates dir (mode 0750) if missing and fsyncs its parent. The
// parent is fsynced even when a concurrent writer created dir first, so that
// neither acknowledges an object before the entry is durable.
func mkdirSynced(dir string) error {
	if err := os.Mkdir(dir, dirMode); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return syncDir(filepath.Dir(dir))
}

// writeFileSync creates path exclusively, writes b, fsyncs and closes it.
func writeFileSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// emptyDir removes every entry of dir.
func emptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
