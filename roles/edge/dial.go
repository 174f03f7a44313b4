package edge

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// providerTransport is the transport of provider reads. Provider URLs come
// from the index and are not trusted: a host that resolves to a
// link-local, multicast or unspecified address is refused when dialling.
func providerTransport() *http.Transport {
	t := newTransport()
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second, Control: refuseUnroutable}
	t.DialContext = d.DialContext
	return t
}

// refuseUnroutable is a dial Control refusing addresses no provider may
// have.
func refuseUnroutable(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	a := ap.Addr().Unmap()
	if a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsMulticast() || a.IsUnspecified() || a.IsInterfaceLocalMulticast() {
		return fmt.Errorf("provider address %s is not routable", a)
	}
	return nil
}
