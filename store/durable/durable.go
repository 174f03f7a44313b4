// Package durable holds the file-system steps every acknowledged write in ron
// is built from (docs/architecture.md §8): write a file exclusively and fsync it,
// rename it into place without replacing anything, fsync the directory.
package durable

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// ErrExists is returned by RenameNoReplace when the target already exists.
var ErrExists = errors.New("durable: target exists")

// SyncDir fsyncs a directory so that entries created or removed in it are
// durable.
func SyncDir(dir string) error {
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

// WriteFileSync creates path exclusively with perm, writes b, fsyncs and
// closes it. On any error the file is removed.
func WriteFileSync(path string, b []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
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

// RenameNoReplace renames oldpath to newpath unless newpath exists
// (ErrExists; oldpath is then left in place). It uses
// renameat2(RENAME_NOREPLACE) and falls back to link + unlink where that is
// unsupported. Of concurrent renames onto one target exactly one succeeds.
func RenameNoReplace(oldpath, newpath string) error {
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST):
		return ErrExists
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EINVAL):
		return LinkRename(oldpath, newpath)
	}
	return &os.LinkError{Op: "renameat2", Old: oldpath, New: newpath, Err: err}
}

// LinkRename is the portable no-replace rename: link, then unlink the source.
func LinkRename(oldpath, newpath string) error {
	if err := os.Link(oldpath, newpath); err != nil {
		if errors.Is(err, os.ErrExist) {
			return ErrExists
		}
		return err
	}
	return os.Remove(oldpath)
}
