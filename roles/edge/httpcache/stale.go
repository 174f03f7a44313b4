package httpcache

import "time"

// Failure is how a revalidation (or refetch) of a stored response failed.
type Failure uint8

const (
	// FailureStatus: the origin answered 500, 502, 503 or 504.
	FailureStatus Failure = iota + 1
	// FailureUnreachable: the origin could not be reached (connect error,
	// timeout, closed connection).
	FailureUnreachable
)

// IsErrorStatus reports whether status is one of the errors that allow
// stale-if-error (RFC 5861 §4): 500, 502, 503, 504.
func IsErrorStatus(status int) bool {
	return status == 500 || status == 502 || status == 503 || status == 504
}

// ServeStaleOnFailure reports whether st may be served (stale) at now after
// its revalidation failed with f (docs/edge.md §7.4, RFC 5861 §4, RFC 9111
// §4.2.4). Never for an invalidated entry or with no-cache, must-revalidate,
// proxy-revalidate or s-maxage. Otherwise the staleness (age − lifetime, 0
// while fresh) must be below one of the windows: the response's
// stale-if-error, the request's stale-if-error (when request directives are
// honoured), or, for FailureUnreachable, p.StaleIfUnreachable.
func ServeStaleOnFailure(req Request, st *Stored, now time.Time, f Failure, p Policy) bool {
	if st == nil || st.Invalidated {
		return false
	}
	dirs, _ := Effective(st.Header)
	if staleForbidden(dirs) {
		return false
	}
	lifetime, age := Freshness(st, now, p)
	staleness := max(0, age-lifetime)
	windows := make([]time.Duration, 0, 3)
	if w, ok := dirs.Seconds("stale-if-error"); ok {
		windows = append(windows, w)
	}
	if w, ok := p.requestDirectives(req.Header).Seconds("stale-if-error"); ok {
		windows = append(windows, w)
	}
	if f == FailureUnreachable {
		windows = append(windows, p.StaleIfUnreachable)
	}
	for _, w := range windows {
		if staleness < w {
			return true
		}
	}
	return false
}
