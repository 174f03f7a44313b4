//go:build !linux

package httpx

import "net"

// sendMore writes p to c (MSG_MORE is Linux's; elsewhere the bytes leave
// at once).
func sendMore(c net.Conn, p []byte) error {
	_, err := c.Write(p)
	return err
}
