package tiles

import (
	"net/http"
	"strings"
)

// acceptsCoding reports whether the request's Accept-Encoding accepts the
// content coding (RFC 9110 §12.5.3; coding is "gzip", "br" or "zstd"):
//
//   - no Accept-Encoding field: every coding is acceptable;
//   - a field that is empty (all its lines blank): none is;
//   - otherwise the coding's own element decides (acceptable when its
//     q-value is > 0; "x-gzip" counts as "gzip"), else a "*" element does,
//     else it is not acceptable.
//
// Names compare case-insensitively; a repeated name counts at its first
// occurrence; an element with an invalid q-value is ignored.
func acceptsCoding(h http.Header, coding string) bool {
	vals := h.Values("Accept-Encoding")
	if len(vals) == 0 {
		return true
	}
	explicit, star := -1, -1
	for _, line := range vals {
		for elem := range strings.SplitSeq(line, ",") {
			name, q, ok := parseCodingElem(elem)
			if !ok {
				continue
			}
			switch {
			case name == "*":
				if star < 0 {
					star = q
				}
			case name == coding || coding == "gzip" && name == "x-gzip":
				if explicit < 0 {
					explicit = q
				}
			}
		}
	}
	if explicit >= 0 {
		return explicit > 0
	}
	return star > 0
}

// parseCodingElem parses one Accept-Encoding element "coding *( OWS ; OWS
// param )" into its lower-cased name and q-value in thousandths (1000 when
// absent). ok is false for an empty element or an invalid q.
func parseCodingElem(elem string) (name string, q int, ok bool) {
	name, params, _ := strings.Cut(elem, ";")
	name = strings.ToLower(strings.Trim(name, " \t"))
	if name == "" {
		return "", 0, false
	}
	q = 1000
	for p := range strings.SplitSeq(params, ";") {
		k, v, found := strings.Cut(strings.Trim(p, " \t"), "=")
		if !found || !strings.EqualFold(strings.Trim(k, " \t"), "q") {
			continue
		}
		if q, ok = parseQ(strings.Trim(v, " \t")); !ok {
			return "", 0, false
		}
	}
	return name, q, true
}

// parseQ parses an RFC 9110 §12.4.2 qvalue ("0", "0.5", "1", "1.000") into
// thousandths.
func parseQ(s string) (int, bool) {
	if s == "" || len(s) > 5 || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	v := int(s[0]-'0') * 1000
	if len(s) == 1 {
		return v, true
	}
	if s[1] != '.' {
		return 0, false
	}
	frac, scale := 0, 100
	for i := 2; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' || (v == 1000 && c != '0') {
			return 0, false
		}
		frac += int(c-'0') * scale
		scale /= 10
	}
	return v + frac, true
}
