package packs

import (
	"os"
	"syscall"
)

// sysStat returns the device, inode and ctime (ns) of fi.
func sysStat(fi os.FileInfo) (dev, ino uint64, ctime int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, fi.ModTime().UnixNano()
	}
	return uint64(st.Dev), st.Ino, st.Ctim.Nano()
}
