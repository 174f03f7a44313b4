// Package hygiene holds the gateway's header hygiene, path re-escaping, header
// limits and CORS rules (docs/gateway.md §6). Everything here is a pure
// function of its inputs: no I/O, no goroutines, no shared state.
package hygiene

import (
	"net/http"
	"net/textproto"
	"strconv"
	"strings"

	"github.com/ronhq/ron/httpx"
)

// hopByHop lists the hop-by-hop headers of docs/gateway.md §6 in canonical form.
var hopByHop = map[string]bool{
	"Connection":          true,
	"Keep-Alive":          true,
	"Proxy-Connection":    true,
	"Proxy-Authenticate":  true,
	"Proxy-Authorization": true,
	"Te":                  true,
	"Trailer":             true,
	"Transfer-Encoding":   true,
	"Upgrade":             true,
}

// clientOnly lists the request headers a client may not pass to an upstream:
// the gateway authenticates itself on trusted links (docs/gateway.md §2).
var clientOnly = map[string]bool{
	"Authorization": true,
	"Cookie":        true,
	"Forwarded":     true,
}

// ToUpstream returns a new header for a request to an upstream: hop-by-hop
// headers, every header named in Connection, and the client's Authorization,
// Cookie, Forwarded, X-Forwarded-* and X-Ron-* headers are removed; every
// other header is copied with all its values. Keys are canonicalised. h is
// not modified and the result shares no slices with it. The caller adds the
// link headers of docs/gateway.md §2 afterwards.
func ToUpstream(h http.Header) http.Header {
	return filter(h, func(k string) bool {
		return clientOnly[k] || strings.HasPrefix(k, "X-Forwarded-") || isRon(k)
	})
}

// FromUpstream returns a new header for the client from an upstream response
// to a request with the given method and status: hop-by-hop headers, every
// header named in Connection and every X-Ron-* header are removed; repeated
// headers (Set-Cookie) keep every value in order. Content-Length is kept on
// HEAD and on 304 so that the client learns the representation's size
// (net/http itself suppresses it on any 304 it writes to the wire). For
// any other answer it is kept when the status allows a body, so the server
// frames the body exactly as the upstream did and a short upstream body is
// seen by the client as an aborted response. It is always removed on 1xx and
// 204 (RFC 9110 §8.6 forbids it there) and whenever it is not one
// non-negative decimal (several differing or malformed values); identical
// repeated values collapse to one. h is not modified.
func FromUpstream(h http.Header, method string, status int) http.Header {
	out := filter(h, isRon)
	cl, ok := contentLength(out.Values("Content-Length"))
	out.Del("Content-Length")
	keep := method == http.MethodHead || status == http.StatusNotModified || httpx.BodyAllowed(status)
	if ok && keep && !forbidsLength(status) {
		out.Set("Content-Length", cl)
	}
	return out
}

// filter copies h without hop-by-hop headers, Connection-named headers and
// every key for which drop (given the canonical key) reports true.
func filter(h http.Header, drop func(canonical string) bool) http.Header {
	named := connectionNamed(h)
	out := make(http.Header, len(h))
	for k, vs := range h {
		ck := textproto.CanonicalMIMEHeaderKey(k)
		if hopByHop[ck] || named[ck] || drop(ck) {
			continue
		}
		out[ck] = append(out[ck], vs...)
	}
	return out
}

// connectionNamed returns the canonical names listed in every Connection
// header (comma-separated, any key spelling).
func connectionNamed(h http.Header) map[string]bool {
	named := map[string]bool{}
	for k, vs := range h {
		if textproto.CanonicalMIMEHeaderKey(k) != "Connection" {
			continue
		}
		for _, v := range vs {
			for _, f := range strings.Split(v, ",") {
				if f = strings.TrimSpace(f); f != "" {
					named[textproto.CanonicalMIMEHeaderKey(f)] = true
				}
			}
		}
	}
	return named
}

// isRon reports whether the canonical key is an X-Ron-* header.
func isRon(canonical string) bool { return strings.HasPrefix(canonical, "X-Ron-") }

// contentLength returns the single non-negative decimal the values agree on.
func contentLength(vs []string) (string, bool) {
	if len(vs) == 0 {
		return "", false
	}
	first := strings.TrimSpace(vs[0])
	n, err := strconv.ParseInt(first, 10, 64)
	if err != nil || n < 0 || first[0] == '+' {
		return "", false
	}
	for _, v := range vs[1:] {
		if strings.TrimSpace(v) != first {
			return "", false
		}
	}
	return strconv.FormatInt(n, 10), true
}

// forbidsLength reports whether RFC 9110 forbids Content-Length for status.
func forbidsLength(status int) bool {
	return status < 200 || status == http.StatusNoContent
}
