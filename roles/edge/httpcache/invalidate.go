package httpcache

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Key locates the stored responses of one origin resource: the escaped path
// below the origin's URL prefix (the `{rest}` of /assets/{origin}/{rest}) and
// the raw query, both byte for byte.
type Key struct {
	Path     string
	RawQuery string
}

// String returns "path" or "path?query".
func (k Key) String() string {
	if k.RawQuery == "" {
		return k.Path
	}
	return k.Path + "?" + k.RawQuery
}

// KeyOf maps an absolute URL in origin space to its Key under the origin URL
// prefix: same scheme and host (case-insensitive, default ports ignored) and
// a path equal to the prefix's path or below it. ok is false otherwise.
func KeyOf(prefix, u *url.URL) (Key, bool) {
	if u == nil || prefix == nil || !strings.EqualFold(u.Scheme, prefix.Scheme) || hostKey(u) != hostKey(prefix) {
		return Key{}, false
	}
	base := strings.TrimSuffix(prefix.EscapedPath(), "/")
	p := u.EscapedPath()
	switch {
	case p == base:
		return Key{RawQuery: u.RawQuery}, true
	case strings.HasPrefix(p, base+"/"):
		return Key{Path: p[len(base)+1:], RawQuery: u.RawQuery}, true
	}
	return Key{}, false
}

// hostKey is the lower-case host with the scheme's default port removed.
func hostKey(u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	scheme := strings.ToLower(u.Scheme)
	if port == "" || (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		return host
	}
	return net.JoinHostPort(host, port)
}

// Invalidates reports whether a response with status to method invalidates
// stored responses (RFC 9111 §4.4): a 2xx or 3xx answer to any method but
// GET, HEAD, OPTIONS and TRACE.
func Invalidates(method string, status int) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return false
	}
	return status >= 200 && status < 400
}

// Invalidations returns the keys whose stored variants must be invalidated
// after the response (status, header h) to a request for upstream, an
// origin-space URL under prefix (docs/edge.md §7.6, RFC 9111 §4.4): none
// unless Invalidates; else the request's own key, then the keys of the
// Location and Content-Location values (resolved against upstream) that lie
// under the same prefix; without duplicates.
func Invalidations(method string, status int, upstream *url.URL, h http.Header, prefix *url.URL) []Key {
	if !Invalidates(method, status) {
		return nil
	}
	var keys []Key
	add := func(u *url.URL) {
		if k, ok := KeyOf(prefix, u); ok && !containsKey(keys, k) {
			keys = append(keys, k)
		}
	}
	add(upstream)
	for _, name := range []string{"Location", "Content-Location"} {
		for _, v := range h.Values(name) {
			if v = trimOWS(v); v == "" {
				continue
			}
			if ref, err := url.Parse(v); err == nil && upstream != nil {
				add(upstream.ResolveReference(ref))
			}
		}
	}
	return keys
}

func containsKey(keys []Key, k Key) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}
