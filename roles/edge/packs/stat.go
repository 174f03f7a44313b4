package packs

import (
	"os"
	"time"
)

// fileStat is what the watcher compares between polls (docs/edge.md §4.3):
// size, mtime, device and inode, ctime.
type fileStat struct {
	size  int64
	mtime int64 // ns since the epoch
	dev   uint64
	ino   uint64
	ctime int64 // ns since the epoch
}

// statPath stats path, following symbolic links.
func statPath(path string) (fileStat, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStat{}, err
	}
	return statOf(fi), nil
}

// statOf extracts a fileStat from fi.
func statOf(fi os.FileInfo) fileStat {
	st := fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	st.dev, st.ino, st.ctime = sysStat(fi)
	return st
}

// sameFile reports whether a and b are the same file (device and inode):
// false means the path now names a replaced file.
func (a fileStat) sameFile(b fileStat) bool { return a.dev == b.dev && a.ino == b.ino }

// modTime is the mtime as a time.Time.
func (a fileStat) modTime() time.Time { return time.Unix(0, a.mtime) }
