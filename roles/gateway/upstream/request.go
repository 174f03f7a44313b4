package upstream

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ronhq/ron/roles/gateway/gatewayapi"
)

// template builds the request every attempt clones: URL, method and the
// link headers except Request-Timeout (set per attempt).
func (l *Link) template(ctx context.Context, c *Call) (*http.Request, error) {
	u, err := l.target(c)
	if err != nil {
		return nil, err
	}
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	h, err := l.linkHeader(ctx, c, "")
	if err != nil {
		return nil, err
	}
	return &http.Request{Method: method, URL: u, Host: u.Host, Header: h,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// target joins the base URL and the call's (escaped) path and query.
func (l *Link) target(c *Call) (*url.URL, error) {
	p := c.Path
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	raw := strings.TrimSuffix(l.base.String(), "/") + p
	if c.RawQuery != "" {
		raw += "?" + c.RawQuery
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errInternal("invalid upstream path")
	}
	return u, nil
}

// linkHeader copies c.Header and sets the trusted-link headers: tenant,
// forwarded headers, Request-Timeout when timeout is not empty and, on HTTP
// links, the link token.
func (l *Link) linkHeader(ctx context.Context, c *Call, timeout string) (http.Header, error) {
	link := [...][2]string{
		{gatewayapi.HeaderTenant, c.Tenant}, {gatewayapi.HeaderForwardedFor, c.ClientIP}, {gatewayapi.HeaderForwardedProto, c.Proto},
		{gatewayapi.HeaderForwardedHost, c.Host}, {gatewayapi.HeaderForwardedPfx, c.Prefix}, {gatewayapi.HeaderRequestTimeout, timeout},
	}
	set := 0
	for _, kv := range link {
		if kv[1] != "" {
			set++
		}
	}
	h, vals := copyHeader(c.Header, len(link), set)
	for i, kv := range link {
		if kv[1] != "" {
			vals[i] = kv[1]
			h[kv[0]] = vals[i : i+1 : i+1]
		}
	}
	return l.withToken(ctx, h)
}

// copyHeader copies src as http.Header.Clone does (one backing array for
// all values, each field's slice capped), without the link headers and
// Authorization, and returns extra more values of the same backing array
// for the caller's own fields; the map is sized for fields more keys (a
// map of up to 8 is one small allocation).
func copyHeader(src http.Header, extra, fields int) (http.Header, []string) {
	nv := extra
	for _, vv := range src {
		nv += len(vv)
	}
	sv := make([]string, nv)
	h := make(http.Header, len(src)+fields)
	for k, vv := range src {
		if linkKey(k) {
			continue
		}
		if vv == nil {
			h[k] = nil
			continue
		}
		n := copy(sv, vv)
		h[k] = sv[:n:n]
		sv = sv[n:]
	}
	return h, sv[:extra:extra]
}

// linkKey reports whether a (canonical) key is one the Link sets or drops.
func linkKey(k string) bool {
	switch k {
	case gatewayapi.HeaderTenant, gatewayapi.HeaderForwardedFor, gatewayapi.HeaderForwardedProto, gatewayapi.HeaderForwardedHost, gatewayapi.HeaderForwardedPfx,
		gatewayapi.HeaderRequestTimeout, "Authorization":
		return true
	}
	return false
}

// withToken adds the link token to h on HTTP links.
func (l *Link) withToken(ctx context.Context, h http.Header) (http.Header, error) {
	if l.inProcess || l.token == nil {
		return h, nil
	}
	tok, err := l.token(ctx)
	if err != nil {
		l.log.Error().Str("upstream", l.name).Err(err).Msg("link token unavailable")
		return nil, errInternal("link token unavailable")
	}
	if tok != "" {
		h.Set("Authorization", "Bearer "+tok)
	}
	return h, nil
}

// requestTimeout renders the remaining time as decimal seconds with
// millisecond precision, at least 0.001.
func requestTimeout(remaining time.Duration) string {
	ms := max(remaining.Milliseconds(), 1)
	return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64)
}
