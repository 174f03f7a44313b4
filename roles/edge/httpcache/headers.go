package httpcache

import (
	"net/http"
	"slices"
	"strings"
)

// notEndToEnd are the fields never stored nor relayed: the hop-by-hop fields
// of RFC 9110 §7.6.1 (plus Trailer: a stored body has no trailers) and the
// proxy-specific fields RFC 9111 §3.1 forbids storing.
var notEndToEnd = []string{
	"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Transfer-Encoding", "Upgrade", "Trailer",
	"Proxy-Authenticate", "Proxy-Authentication-Info", "Proxy-Authorization",
}

// notModifiedFields are the stored fields a 304 generated from an entry
// carries (docs/edge.md §7.4, RFC 9110 §15.4.5).
var notModifiedFields = []string{"Cache-Control", "Content-Location", "Date", "ETag", "Expires", "Last-Modified", "Vary"}

// EndToEnd returns a copy of h, with canonical names, without the hop-by-hop
// and proxy-specific fields and without the fields the Connection field names
// (RFC 9110 §7.6.1, RFC 9111 §3.1). Repeated lines are kept.
func EndToEnd(h http.Header) http.Header {
	drop := connectionNamed(h)
	out := make(http.Header, len(h))
	for k, v := range h {
		name := http.CanonicalHeaderKey(k)
		if slices.Contains(notEndToEnd, name) || slices.Contains(drop, name) {
			continue
		}
		out[name] = append(out[name], v...)
	}
	return out
}

// connectionNamed returns the canonical names listed by Connection.
func connectionNamed(h http.Header) []string {
	var names []string
	for _, line := range h.Values("Connection") {
		for _, opt := range strings.Split(line, ",") {
			if opt = trimOWS(opt); opt != "" {
				names = append(names, http.CanonicalHeaderKey(opt))
			}
		}
	}
	return names
}

// NotModifiedHeader returns the fields of a stored header that a 304
// answered from the entry carries: Cache-Control, Content-Location, Date,
// ETag, Expires, Last-Modified and Vary (the edge adds Age and Cache-Status).
func NotModifiedHeader(stored http.Header) http.Header {
	out := http.Header{}
	for _, name := range notModifiedFields {
		if v := stored.Values(name); len(v) > 0 {
			out[http.CanonicalHeaderKey(name)] = slices.Clone(v)
		}
	}
	return out
}
