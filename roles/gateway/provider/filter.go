package provider

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/ronhq/ron/httpx/safedial"
)

// maxURLBytes bounds a provider URL.
const maxURLBytes = 2048

// Filter returns the usable provider base URLs of urls, in order and in
// normalized form (scheme and host lowercased, no trailing slash), at most
// MaxProviders of them. Dropped: URLs that do not parse or are longer than
// 2 KiB; schemes other than http and https; user info; a query or fragment;
// a port outside 1–65535; IP literal hosts that are link-local (unicast or
// multicast), multicast, unspecified (0.0.0.0, ::) or carry a zone,
// IPv4-mapped IPv6 judged as IPv4; host names whose last label starts with a
// digit (numeric forms like "2852039166" or "0x7f.1" that some resolvers read
// as IPv4 addresses; no real top-level domain starts with a digit);
// providers marked bad; duplicates; and skip (the storage URL already
// tried, compared after normalization; "" skips nothing).
func (f *Fetcher) Filter(urls []string, skip string) []string {
	skipKey, _ := normalize(skip)
	limit := f.maxTries()
	out := make([]string, 0, min(len(urls), limit))
	for _, raw := range urls {
		if len(out) == limit {
			break
		}
		key, ok := normalize(raw)
		if !ok || key == skipKey || f.health.isBad(key) || containsString(out, key) {
			continue
		}
		out = append(out, key)
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// normalize returns the canonical form of a usable provider base URL:
// "scheme://host[:port][/path]" with scheme and host lowercased and the
// path's trailing slashes removed.
func normalize(raw string) (string, bool) {
	if raw == "" || len(raw) > maxURLBytes {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	if !usableHost(u.Hostname()) || !usablePort(u.Port()) {
		return "", false
	}
	return scheme + "://" + strings.ToLower(u.Host) + strings.TrimRight(u.EscapedPath(), "/"), true
}

// usableHost applies the address rules of Filter to a URL's host name.
func usableHost(host string) bool {
	if host == "" {
		return false
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Zone() == "" && safedial.Usable(ip)
	}
	if strings.ContainsAny(host, ":%") { // an IPv6 literal netip refused
		return false
	}
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	lastLabel := labels[len(labels)-1]
	return lastLabel != "" && (lastLabel[0] < '0' || lastLabel[0] > '9')
}

// usablePort accepts an absent port or a decimal 1–65535.
func usablePort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}
