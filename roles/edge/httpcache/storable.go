package httpcache

import "net/http"

// Reason says why a response is or is not stored.
type Reason string

// Storability reasons.
const (
	ReasonStorable       Reason = "storable"
	ReasonMethod         Reason = "method"           // request method is not GET
	ReasonStatus         Reason = "status"           // 1xx, 206, 304 or out of range
	ReasonMustUnderstand Reason = "must_understand"  // must-understand with a status not understood
	ReasonRequestNoStore Reason = "request_no_store" // request Cache-Control: no-store
	ReasonNoStore        Reason = "no_store"         // response no-store
	ReasonPrivate        Reason = "private"          // response private (shared cache)
	ReasonAuthorization  Reason = "authorization"    // request Authorization without public, s-maxage or must-revalidate
	ReasonVaryStar       Reason = "vary_star"        // Vary: *
	ReasonNoFreshness    Reason = "no_freshness"     // no explicit freshness, no public, status not cacheable by default
	ReasonTooLarge       Reason = "too_large"        // Content-Length above Policy.MaxBodyBytes
	ReasonNoValidator    Reason = "no_validator"     // lifetime 0 and neither ETag nor Last-Modified
)

// understoodStatuses are the statuses whose caching rules the edge implements,
// for must-understand (RFC 9111 §5.2.2.3, docs/edge.md §7.2).
var understoodStatuses = []int{200, 203, 204, 300, 301, 302, 303, 307, 308, 404, 405, 410, 414, 501}

// Storable decides whether the response resp to req may be stored (docs/edge.md
// §7.2, RFC 9111 §3, §3.5). The body-completeness and streamed-size checks are
// the caller's; here a known Content-Length above p.MaxBodyBytes refuses. The
// result is ReasonStorable when the response may be stored.
func Storable(req Request, resp Response, p Policy) (bool, Reason) {
	if req.Method != http.MethodGet {
		return false, ReasonMethod
	}
	if resp.Status < 200 || resp.Status > 999 || resp.Status == http.StatusPartialContent || resp.Status == http.StatusNotModified {
		return false, ReasonStatus
	}
	dirs, src := Effective(resp.Header)
	if r := directiveRefusal(req, resp.Status, dirs, p); r != ReasonStorable {
		return false, r
	}
	if _, star := ParseVary(resp.Header); star {
		return false, ReasonVaryStar
	}
	if !explicitlyCacheable(resp, dirs, src) {
		return false, ReasonNoFreshness
	}
	if p.MaxBodyBytes > 0 && resp.ContentLength > p.MaxBodyBytes {
		return false, ReasonTooLarge
	}
	if Lifetime(resp.Status, resp.Header, resp.ResponseTime, p) <= 0 && !ValidatorsOf(resp.Header).Any() {
		return false, ReasonNoValidator
	}
	return true, ReasonStorable
}

// directiveRefusal applies must-understand, no-store (request and response),
// private and the Authorization rule (RFC 9111 §3.5).
func directiveRefusal(req Request, status int, dirs Directives, p Policy) Reason {
	mustUnderstand := dirs.Has("must-understand")
	switch {
	case mustUnderstand && !containsInt(understoodStatuses, status):
		return ReasonMustUnderstand
	case p.requestDirectives(req.Header).Has("no-store"):
		return ReasonRequestNoStore
	case dirs.Has("no-store") && !mustUnderstand:
		return ReasonNoStore
	case dirs.Has("private"):
		return ReasonPrivate
	case len(req.Header.Values("Authorization")) > 0 && !dirs.Has("public") && !dirs.Has("s-maxage") && !dirs.Has("must-revalidate"):
		return ReasonAuthorization
	}
	return ReasonStorable
}

// explicitlyCacheable: max-age, s-maxage, Expires (under Cache-Control),
// public, or a status cacheable by default (RFC 9111 §3).
func explicitlyCacheable(resp Response, dirs Directives, src Source) bool {
	if dirs.Has("max-age") || dirs.Has("s-maxage") || dirs.Has("public") || HeuristicallyCacheable(resp.Status) {
		return true
	}
	return src == SourceCacheControl && len(resp.Header.Values("Expires")) > 0
}
