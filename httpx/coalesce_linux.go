package httpx

import (
	"net"
	"syscall"
)

// sendMore writes p to c with MSG_MORE: the kernel keeps it, as TCP_CORK
// would for this one send, to leave in the same segments as the bytes the
// caller sends next (a sendfile right after). Only for bytes that are
// certainly followed by more: held alone they would wait for the cork
// timeout. It honours c's write deadline.
func sendMore(c net.Conn, p []byte) error {
	sc, ok := c.(syscall.Conn)
	if !ok {
		_, err := c.Write(p)
		return err
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		_, err = c.Write(p)
		return err
	}
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for len(p) > 0 {
			n, err := syscall.SendmsgN(int(fd), p, nil, nil, syscall.MSG_MORE|syscall.MSG_NOSIGNAL)
			switch err {
			case nil:
				p = p[n:]
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // wait until writable (or the deadline)
			default:
				werr = err
				return true
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	return werr
}
