package netcfg

import (
	"fmt"
	"net/netip"
)

// Prefixes returns the networks of list, in order: each entry is a CIDR
// ("10.0.0.0/8", "2001:db8::/32"), masked to its network, or a bare address
// taken as its /32 or /128 (an IPv4-mapped IPv6 address as its IPv4 /32;
// a zone is dropped).
// The error names the first entry that is neither.
func Prefixes(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return nil, fmt.Errorf("%q is not a CIDR or an address", s)
			}
			a = a.Unmap()
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
