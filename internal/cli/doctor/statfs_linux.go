//go:build linux

package doctor

import "golang.org/x/sys/unix"

// statfs reports the space of the filesystem holding path that an
// unprivileged user may use.
func statfs(path string) (Space, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return Space{}, err
	}
	bs := uint64(st.Bsize)
	return Space{Avail: st.Bavail * bs, Total: st.Blocks * bs}, nil
}
