package tenant

import (
	"net/netip"
	"strings"
)

// ClientIP returns the client address of a request (docs/gateway.md §3.3).
// It is the TCP peer unless the peer is inside a trusted prefix; then the
// X-Forwarded-For lines xff are joined in order and walked right to left,
// skipping trusted addresses: the first untrusted one is the client, and when
// all are trusted the leftmost is. An unparsable (or empty) element stops the
// walk and the last good address is used (the peer when none was good).
// IPv4-mapped IPv6 addresses are returned, and matched, as IPv4; zones are
// dropped. Absent or blank X-Forwarded-For lines leave the peer.
func ClientIP(peer netip.Addr, xff []string, trusted []netip.Prefix) netip.Addr {
	peer = canon(peer)
	if !isTrusted(peer, trusted) {
		return peer
	}
	joined := strings.Join(xff, ",")
	if strings.TrimSpace(joined) == "" {
		return peer
	}
	elems := strings.Split(joined, ",")
	last := peer
	for i := len(elems) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(elems[i]))
		if err != nil {
			return last
		}
		a = canon(a)
		if !isTrusted(a, trusted) {
			return a
		}
		last = a
	}
	return last
}

func canon(a netip.Addr) netip.Addr { return a.Unmap().WithZone("") }

// isTrusted reports whether a lies inside one of the trusted prefixes; IPv4
// prefixes written as IPv4-mapped IPv6 match IPv4 addresses too.
func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	if !a.IsValid() {
		return false
	}
	for _, p := range trusted {
		if p.Contains(a) || unmapPrefix(p).Contains(a) {
			return true
		}
	}
	return false
}

// unmapPrefix turns ::ffff:a.b.c.d/n (n ≥ 96) into a.b.c.d/(n−96); other
// prefixes are returned unchanged.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	addr := p.Addr()
	if !addr.Is4In6() || p.Bits() < 96 {
		return p
	}
	return netip.PrefixFrom(addr.Unmap(), p.Bits()-96).Masked()
}
