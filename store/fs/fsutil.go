package fs

import (
	"errors"
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
