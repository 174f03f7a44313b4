package live

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Origin is one configured upstream of /assets (docs/edge.md §7.1, §10).
type Origin struct {
	Name       string        // [a-z0-9][a-z0-9_-]{0,62}
	URL        *url.URL      // from ParseOrigin: scheme, host and an optional path prefix
	DefaultTTL time.Duration // heuristic lifetime when > 0 (default_ttl)
	MaxTries   int           // attempts per upstream GET/HEAD (≤ 0 = 3)
	// AllowInsecure permits an http:// URL on a loopback host.
	AllowInsecure bool
	// ForwardUnsafe forwards methods other than GET and HEAD (docs/edge.md §7.6).
	ForwardUnsafe bool
	// ForwardAuthorization keeps the client's Authorization on requests
	// to the origin.
	ForwardAuthorization bool
	// HonorRequestCacheControl applies the request's Cache-Control and
	// Pragma (docs/edge.md §7.4).
	HonorRequestCacheControl bool
}

// originNameRE is the docs/edge.md §7.1 origin name.
var originNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ParseOrigin validates an origin's name and URL (docs/edge.md §7.1) and
// returns the URL: https:// with a host, no user info, query or fragment
// (a path prefix is allowed); http:// only with allowInsecure and a
// loopback host (127.0.0.0/8, ::1, localhost). The returned URL has a lower
// case scheme and no trailing slash on its path.
func ParseOrigin(name, rawURL string, allowInsecure bool) (*url.URL, error) {
	if !originNameRE.MatchString(name) {
		return nil, fmt.Errorf("origin name %q does not match %s", name, originNameRE)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("origin url: %w", err)
	}
	if err := checkOriginURL(u, rawURL, allowInsecure); err != nil {
		return nil, err
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Path = strings.TrimSuffix(u.Path, "/")
	if u.RawPath != "" {
		u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	}
	return u, nil
}

// checkOriginURL applies the docs/edge.md §7.1 URL rules.
func checkOriginURL(u *url.URL, raw string, allowInsecure bool) error {
	switch {
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("origin url %q needs a scheme and a host", raw)
	case u.User != nil:
		return errors.New("origin url must not carry user info")
	case u.RawQuery != "" || u.ForceQuery || strings.Contains(raw, "?"):
		return errors.New("origin url must not have a query")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return errors.New("origin url must not have a fragment")
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if !allowInsecure {
			return errors.New("an http:// origin needs allow_insecure = true")
		}
		if !loopbackHost(u.Hostname()) {
			return fmt.Errorf("an http:// origin must be on a loopback host, not %q", u.Hostname())
		}
		return nil
	}
	return fmt.Errorf("origin url scheme %q is not https (or http with allow_insecure)", u.Scheme)
}

// loopbackHost: localhost, 127.0.0.0/8 or ::1.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
