package ranges

import (
	"net/http"
	"time"
)

// Validators are the validators of one representation: its entity tag and
// its modification date.
type Validators struct {
	// ETag is the quoted entity tag (`"…"` or `W/"…"`); empty for none.
	ETag string
	// LastModified is the representation's Last-Modified date; zero for
	// none. Without it If-Modified-Since, If-Unmodified-Since and If-Range
	// dates are ignored.
	LastModified time.Time
	// StrongDate says LastModified is a strong validator (RFC 9110
	// §8.8.2.2), so an If-Range date equal to it allows the Range.
	StrongDate bool
}

// CheckConditions evaluates the preconditions of RFC 9110 §13.2.2, in its
// order, for a request on an existing representation with validators v:
//
//  1. If-Match present: 412 unless it matches (see [CheckPreconditions]).
//  2. Else If-Unmodified-Since (a valid HTTP-date, v.LastModified set):
//     412 when the representation was modified after that date.
//  3. If-None-Match present: on a match 304 for GET and HEAD, 412 for other
//     methods.
//  4. Else, for GET and HEAD, If-Modified-Since (a valid HTTP-date,
//     v.LastModified set): 304 when not modified after that date.
//
// It returns 0 when the request may proceed. Dates compare at whole seconds;
// an invalid date is ignored.
func CheckConditions(r *http.Request, v Validators) int {
	if im := fieldList(r.Header, "If-Match"); im != "" {
		if !listMatches(im, v.ETag, strongMatch) {
			return http.StatusPreconditionFailed
		}
	} else if d, ok := headerDate(r, "If-Unmodified-Since"); ok && !v.LastModified.IsZero() &&
		seconds(v.LastModified).After(d) {
		return http.StatusPreconditionFailed
	}
	safe := r.Method == http.MethodGet || r.Method == http.MethodHead
	if inm := fieldList(r.Header, "If-None-Match"); inm != "" {
		if !listMatches(inm, v.ETag, weakMatch) {
			return 0
		}
		if safe {
			return http.StatusNotModified
		}
		return http.StatusPreconditionFailed
	}
	if d, ok := headerDate(r, "If-Modified-Since"); ok && safe && !v.LastModified.IsZero() &&
		!seconds(v.LastModified).After(d) {
		return http.StatusNotModified
	}
	return 0
}

// ifRangeAllowsFor is [IfRangeAllows] with dates: an If-Range HTTP-date
// allows the Range only when v.StrongDate and it equals v.LastModified.
func ifRangeAllowsFor(r *http.Request, v Validators) bool {
	if IfRangeAllows(r, v.ETag) {
		return true
	}
	if !v.StrongDate || v.LastModified.IsZero() {
		return false
	}
	d, ok := headerDate(r, "If-Range")
	return ok && d.Equal(seconds(v.LastModified))
}

// headerDate parses the single line of a date-valued request field.
func headerDate(r *http.Request, name string) (time.Time, bool) {
	vals := r.Header.Values(name)
	if len(vals) != 1 {
		return time.Time{}, false
	}
	d, err := http.ParseTime(trimOWS(vals[0]))
	return d, err == nil
}

// seconds truncates t to whole seconds, the precision of HTTP-dates.
func seconds(t time.Time) time.Time { return t.Truncate(time.Second) }
