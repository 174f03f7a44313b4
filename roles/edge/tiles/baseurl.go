package tiles

import (
	"net/http"
	"net/netip"
	"regexp"
	"strings"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/gateway/gatewayapi"
)

// varyForwarded is the Vary of a TileJSON answer built from the request's
// headers (no public_url): the forwarded headers honoured from trusted peers
// (docs/edge.md §6.4).
const varyForwarded = gatewayapi.HeaderForwardedHost + ", " + gatewayapi.HeaderForwardedProto + ", " +
	gatewayapi.HeaderForwardedPfx

var (
	// fwdHostRE is host[:port] within [A-Za-z0-9.:[]-]: a name or IPv4
	// address, or a bracketed IPv6 address, then an optional port.
	fwdHostRE   = regexp.MustCompile(`^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$`)
	fwdPrefixRE = regexp.MustCompile(`^(/[A-Za-z0-9._~-]+)+$`)
)

// baseURL is TileJSON's <base> (docs/edge.md §6.4): public_url when set (without a
// trailing "/"); else the scheme (https over TLS, or X-Forwarded-Proto
// "http"/"https" from a trusted peer), the Host (or X-Forwarded-Host from a
// trusted peer) and X-Forwarded-Prefix from a trusted peer. A trusted
// peer's X-Forwarded-Host that is not host[:port] of [A-Za-z0-9.:[]-], or
// X-Forwarded-Prefix not matching ^(/[A-Za-z0-9._~-]+)+$, or either field
// repeated, is a 400; so is a request without a Host. Other
// X-Forwarded-Proto values are ignored; untrusted peers' forwarded headers
// are ignored whatever they hold.
func baseURL(r *http.Request, s Settings) (string, error) {
	if s.PublicURL != "" {
		return strings.TrimRight(s.PublicURL, "/"), nil
	}
	scheme, host, prefix := "http", r.Host, ""
	if r.TLS != nil {
		scheme = "https"
	}
	if trustedPeer(r.RemoteAddr, s.TrustedProxies) {
		if p := strings.ToLower(strings.TrimSpace(r.Header.Get(gatewayapi.HeaderForwardedProto))); p == "http" || p == "https" {
			scheme = p
		}
		fh, err := forwarded(r.Header, gatewayapi.HeaderForwardedHost, fwdHostRE)
		if err != nil {
			return "", err
		}
		if fh != "" {
			host = fh
		}
		if prefix, err = forwarded(r.Header, gatewayapi.HeaderForwardedPfx, fwdPrefixRE); err != nil {
			return "", err
		}
	}
	if host == "" {
		return "", httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "the request has no Host")
	}
	return scheme + "://" + host + prefix, nil
}

// forwarded returns the one value of a forwarded header ("" when absent
// or blank), which must match re; several lines or a mismatch are a 400.
func forwarded(h http.Header, name string, re *regexp.Regexp) (string, error) {
	vals := h.Values(name)
	switch {
	case len(vals) == 0:
		return "", nil
	case len(vals) > 1:
		return "", httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "%s given more than once", name)
	}
	v := strings.TrimSpace(vals[0])
	if v != "" && !re.MatchString(v) {
		return "", httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "invalid %s", name)
	}
	return v, nil
}

// trustedPeer reports whether the connection's peer may set forwarded
// headers: loopback (which includes the in-process gateway) or an address
// within trusted.
func trustedPeer(remoteAddr string, trusted []netip.Prefix) bool {
	var a netip.Addr
	if ap, err := netip.ParseAddrPort(remoteAddr); err == nil {
		a = ap.Addr()
	} else if a, err = netip.ParseAddr(remoteAddr); err != nil {
		return false
	}
	a = a.Unmap().WithZone("")
	if a.IsLoopback() {
		return true
	}
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
