package httpcache

import (
	"net/http"
	"slices"
	"strings"
)

// Selected is the value a request had for one field named by Vary, recorded
// with the stored response it selected (RFC 9111 §4.1).
type Selected struct {
	Name    string   // canonical field name
	Value   string   // normalised value (see NormalizedValue)
	Raw     []string // the request's lines, as sent (for revalidation)
	Present bool     // the request had the field
}

// ParseVary returns the field names a response's Vary lists, over all lines,
// in canonical form, without empty members or duplicates, in order; star is
// true when any member is "*" (the response then matches no request).
func ParseVary(h http.Header) (names []string, star bool) {
	for _, line := range h.Values("Vary") {
		for _, member := range strings.Split(line, ",") {
			member = trimOWS(member)
			switch {
			case member == "":
			case member == "*":
				star = true
			default:
				name := http.CanonicalHeaderKey(member)
				if !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
		}
	}
	return names, star
}

// NormalizedValue returns field name of h as Vary matching compares it
// (docs/edge.md §7.4): all lines joined with ", ", whitespace around commas
// and at both ends removed. ok is false when the field is absent.
func NormalizedValue(h http.Header, name string) (string, bool) {
	lines := h.Values(name)
	if len(lines) == 0 {
		return "", false
	}
	parts := strings.Split(strings.Join(lines, ","), ",")
	for i, p := range parts {
		parts[i] = trimOWS(p)
	}
	return strings.Join(parts, ","), true
}

// SelectingFields records the request's values of the fields named by vary.
func SelectingFields(vary []string, req http.Header) []Selected {
	if len(vary) == 0 {
		return nil
	}
	out := make([]Selected, 0, len(vary))
	for _, name := range vary {
		v, ok := NormalizedValue(req, name)
		out = append(out, Selected{Name: name, Value: v, Raw: slices.Clone(req.Values(name)), Present: ok})
	}
	return out
}

// VaryMatches reports whether a stored response may be selected for a
// request with header req: every recorded selecting field has the same
// normalised value, or is absent on both sides (RFC 9111 §4.1).
func VaryMatches(st *Stored, req http.Header) bool {
	if _, star := ParseVary(st.Header); star {
		return false
	}
	for _, sel := range st.Selecting {
		v, ok := NormalizedValue(req, sel.Name)
		if ok != sel.Present || v != sel.Value {
			return false
		}
	}
	return true
}

// Select returns the index of the variant to use for a request, or -1 when
// none matches: among the variants VaryMatches selects, the one with the
// most recent Date, then the most recent response time (RFC 9111 §4.1).
func Select(req http.Header, variants []*Stored) int {
	best := -1
	for i, st := range variants {
		if st == nil || !VaryMatches(st, req) {
			continue
		}
		if best < 0 || newer(st, variants[best]) {
			best = i
		}
	}
	return best
}

// newer reports whether a is more recent than b by Date, then response time.
func newer(a, b *Stored) bool {
	da, db := DateValue(a.Header, a.ResponseTime), DateValue(b.Header, b.ResponseTime)
	if !da.Equal(db) {
		return da.After(db)
	}
	return a.ResponseTime.After(b.ResponseTime)
}
