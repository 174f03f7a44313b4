//go:build linux

package sdnotify

import "golang.org/x/sys/unix"

// monotonicUsec is CLOCK_MONOTONIC in microseconds (systemd's
// MONOTONIC_USEC), or 0 when it cannot be read.
func monotonicUsec() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return uint64(ts.Sec)*1_000_000 + uint64(ts.Nsec)/1_000
}
