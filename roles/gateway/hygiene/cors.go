package hygiene

import (
	"net/http"
	"strings"
)

// CORS header values of docs/gateway.md §6.
const (
	ExposeHeaders     = "ETag, Content-Range, Content-Length, Accept-Ranges, Retry-After, X-Corr-ID"
	ReadMethods       = "GET, HEAD"
	WriteMethods      = "GET, HEAD, POST, PUT"
	ReadAllowHeaders  = "Range, If-Match, If-None-Match, If-Range, If-Modified-Since, Request-Timeout, X-Corr-ID"
	WriteAllowHeaders = ReadAllowHeaders + ", Authorization, Content-Type, Content-Encoding"
	PreflightMaxAge   = "600"
)

// CORS is the gateway's cross-origin policy. Origins is cors_origins: exact
// origin strings (e.g. "https://app.example", compared byte for byte) and
// optionally "*". "*" admits every origin to read routes only; write routes
// and write preflights admit only origins listed explicitly. The zero value
// admits no origin. CORS is read-only after construction and safe for
// concurrent use.
type CORS struct {
	Origins []string
}

// Apply adds the CORS response headers to w for the actual (non-preflight)
// request r; write tells whether r is on a write route. When r has a
// non-empty Origin that is admitted, w gets Access-Control-Allow-Origin ("*"
// for a read admitted through "*", otherwise the origin) and
// Access-Control-Expose-Headers. Whenever the answer depends on Origin (any
// policy except a read under "*"), w also gets Vary: Origin, even when the
// origin is absent or not admitted, so shared caches never serve one
// origin's answer to another.
func (c CORS) Apply(w http.Header, r *http.Request, write bool) {
	allow, vary := c.decide(r.Header.Get("Origin"), write)
	if vary {
		addVary(w, "Origin")
	}
	if allow != "" {
		w.Set("Access-Control-Allow-Origin", allow)
		w.Set("Access-Control-Expose-Headers", ExposeHeaders)
	}
}

// Preflight adds the headers of a CORS preflight answer for the OPTIONS
// request r to w and returns the status to send, always 204. An admitted
// origin gets Access-Control-Allow-Origin (the origin plus Vary: Origin when
// listed explicitly, else "*" when "*" is listed),
// Access-Control-Allow-Methods, Access-Control-Allow-Headers and
// Access-Control-Max-Age: 600; the methods and headers include the write
// ones (POST, PUT; Authorization, Content-Type, Content-Encoding) only for
// an origin listed explicitly. An origin not admitted gets no
// Access-Control-* header, so the browser refuses the actual request.
func (c CORS) Preflight(w http.Header, r *http.Request) (status int) {
	origin := r.Header.Get("Origin")
	write := c.explicit(origin)
	allow, vary := c.decide(origin, write)
	if vary {
		addVary(w, "Origin")
	}
	if allow == "" {
		return http.StatusNoContent
	}
	methods, headers := ReadMethods, ReadAllowHeaders
	if write {
		methods, headers = WriteMethods, WriteAllowHeaders
	}
	w.Set("Access-Control-Allow-Origin", allow)
	w.Set("Access-Control-Allow-Methods", methods)
	w.Set("Access-Control-Allow-Headers", headers)
	w.Set("Access-Control-Max-Age", PreflightMaxAge)
	return http.StatusNoContent
}

// decide returns the Allow-Origin value ("" = not admitted) and whether the
// answer varies with Origin.
func (c CORS) decide(origin string, write bool) (allow string, vary bool) {
	if !write && c.wildcard() {
		if origin == "" {
			return "", false
		}
		return "*", false
	}
	if len(c.Origins) == 0 {
		return "", false
	}
	if c.explicit(origin) {
		return origin, true
	}
	return "", true
}

func (c CORS) wildcard() bool { return c.listed("*") }

// explicit reports whether origin is a real origin listed byte for byte.
func (c CORS) explicit(origin string) bool {
	return origin != "" && origin != "*" && c.listed(origin)
}

func (c CORS) listed(s string) bool {
	for _, o := range c.Origins {
		if o == s {
			return true
		}
	}
	return false
}

// addVary adds token to Vary unless some Vary value already lists it.
func addVary(h http.Header, token string) {
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f == "*" || strings.EqualFold(f, token) {
				return
			}
		}
	}
	h.Add("Vary", token)
}
