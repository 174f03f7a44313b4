package admission

import (
	"net/http"
	"strings"
	"time"

	"github.com/ronhq/ron/httpx"
)

// Request-Timeout bounds (docs/gateway.md §3.8) and the default forward
// deadline (forward_timeout).
const (
	MinRequestTimeout     = httpx.MinRequestTimeout
	MaxRequestTimeout     = time.Hour
	DefaultForwardTimeout = 5 * time.Second
)

// ErrRequestTimeout answers a Request-Timeout header that is not decimal
// seconds within 0.001–3600 (400 bad_request).
var ErrRequestTimeout = httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest,
	"Request-Timeout must be decimal seconds from 0.001 to 3600").
	WithDetails(map[string]any{"header": "Request-Timeout"})

// RequestDeadline is the forward deadline of a request that arrived at
// arrival (docs/gateway.md §3.8): arrival + forward, or arrival + the
// request's Request-Timeout when that is shorter; queue wait counts.
// forward ≤ 0 means DefaultForwardTimeout. A Request-Timeout that is
// present but not one decimal number of seconds from 0.001 to 3600 (digits,
// optionally a dot and more digits; surrounding blanks allowed), or that is
// sent more than once, is ErrRequestTimeout.
func RequestDeadline(arrival time.Time, h http.Header, forward time.Duration) (time.Time, error) {
	if forward <= 0 {
		forward = DefaultForwardTimeout
	}
	vals := h.Values("Request-Timeout")
	switch len(vals) {
	case 0:
		return arrival.Add(forward), nil
	case 1:
	default:
		return time.Time{}, ErrRequestTimeout
	}
	d, err := ParseRequestTimeout(vals[0])
	if err != nil {
		return time.Time{}, err
	}
	return arrival.Add(min(d, forward)), nil
}

// ParseRequestTimeout parses one Request-Timeout value: decimal seconds
// (1*DIGIT ["." 1*DIGIT]) from 0.001 to 3600, read exactly to the
// nanosecond (further digits only decide whether the bounds are passed).
// Anything else is ErrRequestTimeout.
func ParseRequestTimeout(v string) (time.Duration, error) {
	whole, frac, dotted := strings.Cut(strings.Trim(v, " \t"), ".")
	if !allDigits(whole) || (dotted && !allDigits(frac)) {
		return 0, ErrRequestTimeout
	}
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > 4 { // ≥ 10000 s
		return 0, ErrRequestTimeout
	}
	var d time.Duration
	for _, c := range whole {
		d = d*10 + time.Duration(c-'0')
	}
	d *= time.Second
	scale := 100 * time.Millisecond
	rest := false // nonzero digits past the nanosecond
	for _, c := range frac {
		if scale == 0 {
			rest = rest || c != '0'
			continue
		}
		d += time.Duration(c-'0') * scale
		scale /= 10
	}
	if d < MinRequestTimeout || d > MaxRequestTimeout || (d == MaxRequestTimeout && rest) {
		return 0, ErrRequestTimeout
	}
	return d, nil
}

// allDigits reports whether s is one or more ASCII digits.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
