// Package tenant identifies the tenant of a gateway request and holds the
// per-tenant admission state (docs/gateway.md §3.3, §3.4, §3.6): the client IP
// behind trusted proxies, the anonymous prefix tenants, the token tenant,
// and a bounded map of per-tenant request and byte buckets.
package tenant

import (
	"net/netip"
	"regexp"
	"strings"
)

// ID names a tenant: a registry tenant id, "default", or "anon:<prefix>".
type ID string

// Default is the tenant of a valid token without a tenant caveat.
const Default ID = "default"

// AnonPrefix starts every anonymous tenant id; token tenants may not use it.
const AnonPrefix = "anon:"

// idSyntax is the registry's tenant id syntax (docs/gateway.md §3.3).
var idSyntax = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:#/@-]{0,127}$`)

// ValidTokenTenant reports whether s may name a tenant in a token caveat: it
// matches the registry id syntax and does not start with "anon:".
func ValidTokenTenant(s string) bool {
	return idSyntax.MatchString(s) && !strings.HasPrefix(s, AnonPrefix)
}

// Anonymous reports whether id is an anonymous (per client prefix) tenant.
func (id ID) Anonymous() bool { return strings.HasPrefix(string(id), AnonPrefix) }

// Anon returns the anonymous tenant id of a client address: IPv4 (and
// IPv4-mapped IPv6) masked to /24, IPv6 to /64, e.g. "anon:203.0.113.0/24"
// or "anon:2001:db8:1:2::/64". The zone is ignored. An invalid address gives
// "anon:unknown".
func Anon(ip netip.Addr) string {
	ip = ip.Unmap().WithZone("")
	if !ip.IsValid() {
		return AnonPrefix + "unknown"
	}
	bits := 64
	if ip.Is4() {
		bits = 24
	}
	p, err := ip.Prefix(bits)
	if err != nil {
		return AnonPrefix + "unknown"
	}
	return AnonPrefix + p.String()
}
