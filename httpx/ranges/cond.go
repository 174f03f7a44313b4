package ranges

import (
	"net/http"
	"strings"
)

// CheckPreconditions evaluates If-Match and If-None-Match for a request on an
// existing representation whose entity tag is etag (quoted, e.g. `"b3:ab…"`;
// normally strong), in RFC 9110 §13.2.2 order. It returns:
//
//   - 412 when If-Match is present and does not match: "*" matches, otherwise
//     some listed tag must equal etag by strong comparison (weak tags never
//     match). A malformed list matches nothing.
//   - 304 for GET and HEAD (412 for other methods) when If-Match passed or is
//     absent and If-None-Match matches: "*", or a listed tag equal to etag by
//     weak comparison (W/ prefixes ignored).
//   - 0 otherwise: proceed.
//
// If-Match takes precedence: a failing If-Match gives 412 even when
// If-None-Match would match. If-Modified-Since and If-Unmodified-Since are
// ignored (docs/storage.md §4). Several header lines of one field are combined
// as a list; an empty field counts as absent.
func CheckPreconditions(r *http.Request, etag string) int {
	return CheckConditions(r, Validators{ETag: etag})
}

// IfRangeAllows reports whether the Range header may be honoured given
// If-Range: true when If-Range is absent or empty, or when its value (trimmed of
// whitespace) is exactly etag and etag is a strong tag; false for anything else
// (weak tag, other tag, HTTP-date, garbage, several If-Range lines).
func IfRangeAllows(r *http.Request, etag string) bool {
	vals := r.Header.Values("If-Range")
	switch len(vals) {
	case 0:
		return true
	case 1:
	default:
		return false
	}
	v := trimOWS(vals[0])
	if v == "" {
		return true
	}
	tag, rest := scanETag(v)
	return tag != "" && rest == "" && strongMatch(tag, etag)
}

// fieldList joins all lines of a list-valued header field with ", ", dropping
// empty lines.
func fieldList(h http.Header, name string) string {
	vals := h.Values(name)
	switch len(vals) {
	case 0:
		return ""
	case 1:
		return trimOWS(vals[0])
	}
	parts := make([]string, 0, len(vals))
	for _, v := range vals {
		if v = trimOWS(v); v != "" {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, ", ")
}

// listMatches reports whether the If-Match/If-None-Match value list matches
// etag under match: "*" matches any existing representation; otherwise a listed
// entity tag must match. Parsing stops (no further match) at the first malformed
// element.
func listMatches(list, etag string, match func(a, b string) bool) bool {
	for {
		list = strings.TrimLeft(list, " \t")
		switch {
		case list == "":
			return false
		case list[0] == ',':
			list = list[1:]
			continue
		case list[0] == '*':
			return elementEnds(list[1:])
		}
		tag, rest := scanETag(list)
		if tag == "" || !elementEnds(rest) {
			return false
		}
		if match(tag, etag) {
			return true
		}
		list = rest
	}
}

// elementEnds reports whether s, the text after a list element, continues with
// optional whitespace followed by a comma or the end.
func elementEnds(s string) bool {
	s = strings.TrimLeft(s, " \t")
	return s == "" || s[0] == ','
}

// scanETag splits a leading entity tag (RFC 9110 §8.8.3: [W/] DQUOTE *etagc
// DQUOTE) off s. It returns "" for tag when s does not start with one.
func scanETag(s string) (tag, rest string) {
	i := 0
	if strings.HasPrefix(s, "W/") {
		i = 2
	}
	if i >= len(s) || s[i] != '"' {
		return "", ""
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[:j+1], s[j+1:]
		case c == 0x21, c >= 0x23 && c <= 0x7e, c >= 0x80:
		default:
			return "", ""
		}
	}
	return "", ""
}

// strongMatch is RFC 9110 §8.8.3.2 strong comparison: both tags strong and
// equal.
func strongMatch(a, b string) bool {
	return a == b && a != "" && !strings.HasPrefix(a, "W/")
}

// weakMatch is RFC 9110 §8.8.3.2 weak comparison: opaque tags equal, W/
// prefixes ignored.
func weakMatch(a, b string) bool {
	a, b = strings.TrimPrefix(a, "W/"), strings.TrimPrefix(b, "W/")
	return a == b && a != ""
}
