package httpcache

import (
	"math"
	"net/http"
	"time"
)

// heuristicStatuses are cacheable by default (RFC 9110 §15.1, docs/edge.md §7.2).
var heuristicStatuses = []int{200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501}

// HeuristicallyCacheable reports whether status is cacheable by default.
func HeuristicallyCacheable(status int) bool { return containsInt(heuristicStatuses, status) }

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Lifetime returns the freshness lifetime of a response with this status
// and header received at responseTime (docs/edge.md §7.3, RFC 9111
// §4.2.1–4.2.2), from its effective directives: s-maxage, else max-age (a bad
// argument counts as 0), else Expires − Date (only under Cache-Control; an
// invalid Expires means 0), else — for a heuristically cacheable status or
// `public` — p.DefaultTTL when > 0, else 10 % of Date − Last-Modified capped
// at p.HeuristicMaxTTL; otherwise 0. Never negative.
func Lifetime(status int, h http.Header, responseTime time.Time, p Policy) time.Duration {
	dirs, src := Effective(h)
	if d, ok := dirs.lifetimeDirective("s-maxage"); ok {
		return d
	}
	if d, ok := dirs.lifetimeDirective("max-age"); ok {
		return d
	}
	date := DateValue(h, responseTime)
	if src == SourceCacheControl {
		if exp, present, valid := ParseExpires(h); present {
			if !valid {
				return 0
			}
			return max(0, exp.Sub(date))
		}
	}
	if !HeuristicallyCacheable(status) && !dirs.Has("public") {
		return 0
	}
	if p.DefaultTTL > 0 {
		return p.DefaultTTL
	}
	lm, ok := LastModified(h)
	if !ok || !lm.Before(date) {
		return 0
	}
	return max(0, min(date.Sub(lm)/10, p.HeuristicMaxTTL))
}

// CurrentAge is RFC 9111 §4.2.3 for a response with header h exchanged
// between requestTime and responseTime, at now:
//
//	apparent_age = max(0, response_time − date_value)
//	corrected_age_value = age_value + (response_time − request_time)
//	current_age = max(apparent_age, corrected_age_value) + (now − response_time)
//
// A missing or invalid Date or Age counts as the response time or 0; negative
// intervals (clock steps) count as 0, so the result is never negative. Sums
// saturate instead of overflowing.
func CurrentAge(h http.Header, requestTime, responseTime, now time.Time) time.Duration {
	apparent := max(0, responseTime.Sub(DateValue(h, responseTime)))
	ageValue, _ := ParseAge(h)
	corrected := addSat(ageValue, max(0, responseTime.Sub(requestTime)))
	return addSat(max(apparent, corrected), max(0, now.Sub(responseTime)))
}

// Freshness returns the lifetime and current age of a stored response at now.
func Freshness(st *Stored, now time.Time, p Policy) (lifetime, age time.Duration) {
	return Lifetime(st.Status, st.Header, st.ResponseTime, p), CurrentAge(st.Header, st.RequestTime, st.ResponseTime, now)
}

// addSat adds two non-negative durations, saturating at the maximum.
func addSat(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
