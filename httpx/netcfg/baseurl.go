package netcfg

import (
	"fmt"
	"net/url"
)

// CheckBaseURL accepts an http(s) base URL: it parses, its scheme is http or
// https (in any case), it has a host, and it carries no user info, query or
// fragment. A path is allowed (a prefix the role's routes follow).
func CheckBaseURL(raw string) error {
	p, err := url.Parse(raw)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil || p.RawQuery != "" || p.Fragment != "" {
		return fmt.Errorf("%q is not an http(s) base URL without user info, query or fragment", raw)
	}
	return nil
}
