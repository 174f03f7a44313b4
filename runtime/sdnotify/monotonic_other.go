//go:build !linux

package sdnotify

// monotonicUsec is 0 where systemd does not run: MONOTONIC_USEC is omitted.
func monotonicUsec() uint64 { return 0 }
