//go:build !linux

package packs

import "os"

// sysStat is the portable fallback: no inode (every change counts as in
// place) and the mtime standing in for the ctime.
func sysStat(fi os.FileInfo) (dev, ino uint64, ctime int64) {
	return 0, 0, fi.ModTime().UnixNano()
}
