package fs

import (
	"errors"
	"golang.org/x/sys/unix"
	"os"
	"path/filepath"

	"github.com/ronhq/ron/store/durable"
)

const (
	fileMode = 0o640
	dirMode  = 0o750
)

// mkdirSynced creates dir (mode 0750) if missing and fsyncs its parent. The
// parent is fsynced even when a concurrent writer created dir first, so that
// neither acknowledges an object before the entry is durable.
func mkdirSynced(dir string) error {
	if err := os.Mkdir(dir, dirMode); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return durable.SyncDir(filepath.Dir(dir))
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

// openRead opens a regular file for reading without registering it with the
// runtime's network poller: os.Open of a regular file costs several extra
// fcntl calls and a failing epoll_ctl per request, which shows on small GETs.
// The file is only read with ReadAt (pread), which never needs the poller.
func openRead(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
