package httpcache

import (
	"net/http"
	"strings"
	"time"
)

// ParseAge returns the Age field of h (RFC 9111 §5.1, docs/edge.md §7.3): the
// first member of the first line, digits only, saturating at 2^31 seconds.
// ok is false when Age is absent or that member is not delta-seconds (the
// field is then ignored).
func ParseAge(h http.Header) (time.Duration, bool) {
	lines := h.Values("Age")
	if len(lines) == 0 {
		return 0, false
	}
	first := lines[0]
	if i := strings.IndexByte(first, ','); i >= 0 {
		first = first[:i]
	}
	n, ok := parseDeltaSeconds(trimOWS(first))
	if !ok {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}

// ParseExpires returns the Expires field of h (RFC 9111 §5.3). present is
// false without an Expires line; valid is false for several lines or a value
// that is not an HTTP-date, which means "already expired".
func ParseExpires(h http.Header) (t time.Time, present, valid bool) {
	return singleDate(h, "Expires")
}

// DateValue returns the Date of a response, or responseTime when Date is
// missing, repeated or invalid (docs/edge.md §7.3, RFC 9110 §6.6.1).
func DateValue(h http.Header, responseTime time.Time) time.Time {
	if t, _, ok := singleDate(h, "Date"); ok {
		return t
	}
	return responseTime
}

// LastModified returns the Last-Modified of h; ok is false when it is
// missing, repeated or not an HTTP-date.
func LastModified(h http.Header) (time.Time, bool) {
	t, _, ok := singleDate(h, "Last-Modified")
	return t, ok
}

// singleDate parses a field that must have exactly one HTTP-date line.
func singleDate(h http.Header, name string) (t time.Time, present, valid bool) {
	lines := h.Values(name)
	switch len(lines) {
	case 0:
		return time.Time{}, false, false
	case 1:
		t, ok := ParseHTTPDate(lines[0])
		return t, true, ok
	}
	return time.Time{}, true, false
}
