package httpcache

import (
	"strings"
	"time"
)

var (
	shortDays = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	longDays  = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
	months    = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
)

// ParseHTTPDate parses an HTTP-date (RFC 9110 §5.6.7) strictly in one of its
// three forms:
//
//	IMF-fixdate  Sun, 06 Nov 1994 08:49:37 GMT
//	RFC 850      Sunday, 06-Nov-94 08:49:37 GMT
//	asctime      Sun Nov  6 08:49:37 1994
//
// Day and month names and "GMT" are case-insensitive; the weekday is checked
// to be a day name but not against the date. Anything else fails: another
// zone ("UTC"), a two-digit year in the IMF form, a missing comma, extra or
// missing spaces, dashes in the IMF form, dotted or one-digit hours, an
// impossible day or time. A two-digit RFC 850 year yy means 19yy when
// yy ≥ 69, else 20yy. Surrounding whitespace is ignored.
func ParseHTTPDate(s string) (time.Time, bool) {
	s = trimOWS(s)
	switch {
	case len(s) == 29 && s[3] == ',':
		return parseIMF(s)
	case len(s) == 24 && s[3] == ' ':
		return parseASCTime(s)
	}
	return parseRFC850(s)
}

// parseIMF parses "Sun, 06 Nov 1994 08:49:37 GMT".
func parseIMF(s string) (time.Time, bool) {
	if !oneOf(s[:3], shortDays) || s[3:5] != ", " || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' || !strings.EqualFold(s[25:], " GMT") {
		return time.Time{}, false
	}
	return build(s[12:16], s[8:11], s[5:7], s[17:25])
}

// parseASCTime parses "Sun Nov  6 08:49:37 1994".
func parseASCTime(s string) (time.Time, bool) {
	if !oneOf(s[:3], shortDays) || s[7] != ' ' || s[10] != ' ' || s[19] != ' ' {
		return time.Time{}, false
	}
	day := s[8:10]
	if day[0] == ' ' {
		day = "0" + day[1:]
	}
	return build(s[20:], s[4:7], day, s[11:19])
}

// parseRFC850 parses "Sunday, 06-Nov-94 08:49:37 GMT".
func parseRFC850(s string) (time.Time, bool) {
	comma := strings.IndexByte(s, ',')
	if comma < 0 || !oneOf(s[:comma], longDays) {
		return time.Time{}, false
	}
	rest := s[comma+1:]
	if len(rest) != 23 || rest[0] != ' ' || rest[3] != '-' || rest[7] != '-' || rest[10] != ' ' || !strings.EqualFold(rest[19:], " GMT") {
		return time.Time{}, false
	}
	yy, ok := atoiFixed(rest[8:10])
	if !ok {
		return time.Time{}, false
	}
	year := "20" + rest[8:10]
	if yy >= 69 {
		year = "19" + rest[8:10]
	}
	return build(year, rest[4:7], rest[1:3], rest[11:19])
}

// build validates the parts (4-digit year, month name, 2-digit day,
// "HH:MM:SS") and returns the UTC time.
func build(year, month, day, clock string) (time.Time, bool) {
	y, okY := atoiFixed(year)
	d, okD := atoiFixed(day)
	if len(year) != 4 || !okY || !okD || len(clock) != 8 || clock[2] != ':' || clock[5] != ':' {
		return time.Time{}, false
	}
	hh, okH := atoiFixed(clock[0:2])
	mm, okM := atoiFixed(clock[3:5])
	ss, okS := atoiFixed(clock[6:8])
	m := indexOf(month, months) + 1
	if !okH || !okM || !okS || m == 0 || hh > 23 || mm > 59 || ss > 60 || d < 1 {
		return time.Time{}, false
	}
	if d > time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(m), d, hh, mm, ss, 0, time.UTC), true
}

// atoiFixed parses a non-empty all-digit string.
func atoiFixed(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

func oneOf(s string, names []string) bool { return indexOf(s, names) >= 0 }

func indexOf(s string, names []string) int {
	for i, n := range names {
		if strings.EqualFold(s, n) {
			return i
		}
	}
	return -1
}

// FormatHTTPDate formats t as an IMF-fixdate.
func FormatHTTPDate(t time.Time) string { return t.UTC().Format(timeFormatGMT) }

const timeFormatGMT = "Mon, 02 Jan 2006 15:04:05 GMT"
