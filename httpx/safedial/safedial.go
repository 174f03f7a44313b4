// Package safedial dials the untrusted URLs a node is handed (provider base
// URLs from an index): addresses no such URL may reach are refused when the
// connection is made, after name resolution, so that a host name cannot
// smuggle a link-local address (a cloud metadata service) past URL checks.
// Loopback and private addresses stay usable: providers may run on the same
// host or network.
package safedial

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Dialer settings of Guard.
const (
	ConnectTimeout = 5 * time.Second
	KeepAlive      = 30 * time.Second
)

// Usable reports whether a may be dialled for an untrusted URL: it is not
// unspecified (0.0.0.0, ::), link-local (unicast or multicast),
// interface-local multicast or multicast. An IPv4-mapped IPv6 address is
// judged as its IPv4 address.
func Usable(a netip.Addr) bool {
	a = a.Unmap()
	return !a.IsUnspecified() && !a.IsLinkLocalUnicast() && !a.IsLinkLocalMulticast() &&
		!a.IsInterfaceLocalMulticast() && !a.IsMulticast()
}

// Control is a net.Dialer Control that refuses an address Usable rejects
// (and one that is not an IP address and port).
func Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	if !Usable(ap.Addr()) {
		return fmt.Errorf("provider address %s is not routable", ap.Addr().Unmap())
	}
	return nil
}

// Guard makes t dial through a net.Dialer with Control, ConnectTimeout and
// KeepAlive, and returns t. t's other settings (pools, TLS, proxy) are
// left as they are.
func Guard(t *http.Transport) *http.Transport {
	d := &net.Dialer{Timeout: ConnectTimeout, KeepAlive: KeepAlive, Control: Control}
	t.DialContext = d.DialContext
	return t
}
