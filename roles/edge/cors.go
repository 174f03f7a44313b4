package edge

import (
	"net/http"
	"slices"
	"strings"
)

// CORS header values of docs/edge.md §2.
const (
	corsExposeHeaders = "ETag, Content-Range, Content-Length, Accept-Ranges, Cache-Status, X-Corr-ID"
	corsAllowMethods  = "GET, HEAD"
	corsAllowHeaders  = "Range, If-Match, If-None-Match, If-Range, If-Modified-Since, Request-Timeout, X-Corr-ID"
	corsMaxAge        = "600"
)

// cors is the policy of cors_origins for /o, /packs and /tiles.
type cors struct{ origins []string }

// any reports whether every origin may read ("*" is listed).
func (p cors) any() bool { return slices.Contains(p.origins, "*") }

// allowed returns the Access-Control-Allow-Origin value for a request
// from origin: "*", the origin itself when listed, or "" (none).
func (p cors) allowed(origin string) string {
	switch {
	case origin == "":
		return ""
	case p.any():
		return "*"
	case slices.Contains(p.origins, origin):
		return origin
	}
	return ""
}

// apply sets the CORS response headers of a request to a CORS route.
// Without "*" the answer depends on Origin, so it always varies on it
// (a shared cache must not give one origin's answer to another).
func (p cors) apply(h http.Header, r *http.Request) {
	if !p.any() {
		addVary(h, "Origin")
	}
	if a := p.allowed(r.Header.Get("Origin")); a != "" {
		h.Set("Access-Control-Allow-Origin", a)
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
	}
}

// preflight sets the headers of a 204 answer to OPTIONS on a CORS route.
func (p cors) preflight(h http.Header, r *http.Request) {
	if !p.any() {
		addVary(h, "Origin")
	}
	if a := p.allowed(r.Header.Get("Origin")); a != "" {
		h.Set("Access-Control-Allow-Origin", a)
	}
	h.Set("Access-Control-Allow-Methods", corsAllowMethods)
	h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	h.Set("Access-Control-Max-Age", corsMaxAge)
	h.Set("Allow", "GET, HEAD, OPTIONS")
}

// addVary adds field to Vary unless it is listed already (or "*" is).
func addVary(h http.Header, field string) {
	for _, line := range h.Values("Vary") {
		for _, f := range strings.Split(line, ",") {
			if f = strings.TrimSpace(f); f == "*" || strings.EqualFold(f, field) {
				return
			}
		}
	}
	h.Add("Vary", field)
}
