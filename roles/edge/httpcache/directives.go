package httpcache

import (
	"net/http"
	"strings"
	"time"
)

// MaxDeltaSeconds is the value delta-seconds saturate at (RFC 9111 §1.2.2:
// 2^31, "effectively infinite").
const MaxDeltaSeconds = 1 << 31

// Directive is the argument of one cache directive.
type Directive struct {
	// Value is the argument with quotes and escapes removed; "" when none.
	Value string
	// HasValue reports that the directive had an "=" argument.
	HasValue bool
	// Malformed reports a syntactically bad argument: whitespace around "=",
	// an empty or non-token argument, an unterminated quoted string or text
	// after the closing quote.
	Malformed bool
}

// Directives maps lower-case directive names to the first occurrence of each
// (docs/edge.md §7.3: a repeated directive counts once, as its first
// occurrence). A nil Directives is empty.
type Directives map[string]Directive

// Has reports whether the directive name (lower case) is present, whatever
// its argument.
func (d Directives) Has(name string) bool {
	_, ok := d[name]
	return ok
}

// Seconds returns the directive's argument as delta-seconds (RFC 9111
// §1.2.2: digits only, also inside quotes; values ≥ 2^31 saturate). ok is
// false when the directive is absent or its argument is missing or invalid.
func (d Directives) Seconds(name string) (time.Duration, bool) {
	v, present := d[name]
	if !present || !v.HasValue || v.Malformed {
		return 0, false
	}
	n, ok := parseDeltaSeconds(v.Value)
	if !ok {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}

// lifetimeDirective returns max-age or s-maxage as a response lifetime: a
// present directive with a bad or missing argument counts as 0 (RFC 9111
// §4.2.1, docs/edge.md §7.3). present is false only when the directive is
// absent.
func (d Directives) lifetimeDirective(name string) (lifetime time.Duration, present bool) {
	if !d.Has(name) {
		return 0, false
	}
	s, _ := d.Seconds(name)
	return s, true
}

// parseDeltaSeconds parses 1*DIGIT, saturating at MaxDeltaSeconds.
func parseDeltaSeconds(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < MaxDeltaSeconds {
			n = n*10 + int64(c-'0')
		}
	}
	return min(n, MaxDeltaSeconds), true
}

// ParseCacheControl parses the lines of a Cache-Control field (RFC 9111
// §5.2): a comma-separated list of `token [ "=" ( token / quoted-string ) ]`
// across all lines. Names are case-insensitive; commas and directive-like
// text inside quoted strings belong to the argument; elements whose name is
// not a token are skipped; the first occurrence of a name wins.
func ParseCacheControl(lines []string) Directives {
	d := Directives{}
	for _, line := range lines {
		for _, elem := range splitList(line) {
			name, dir, ok := parseElement(elem)
			if ok && !d.Has(name) {
				d[name] = dir
			}
		}
	}
	return d
}

// RequestDirectives returns the cache directives of a request: its
// Cache-Control, plus `no-cache` when the request has `Pragma: no-cache` and
// no Cache-Control field at all (RFC 9111 §5.4, docs/edge.md §7.4).
func RequestDirectives(h http.Header) Directives {
	lines := h.Values("Cache-Control")
	d := ParseCacheControl(lines)
	if len(lines) == 0 && pragmaNoCache(h) {
		d["no-cache"] = Directive{}
	}
	return d
}

// pragmaNoCache reports whether a Pragma line lists no-cache.
func pragmaNoCache(h http.Header) bool {
	for _, line := range h.Values("Pragma") {
		for _, elem := range splitList(line) {
			if strings.EqualFold(trimOWS(elem), "no-cache") {
				return true
			}
		}
	}
	return false
}

// splitList splits a list field value at the commas outside quoted strings;
// elements are returned untrimmed and may be empty.
func splitList(s string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// parseElement parses one list element `name [ OWS "=" OWS value ]`; ok is
// false for an empty element or a name that is not a token.
func parseElement(elem string) (string, Directive, bool) {
	elem = trimOWS(elem)
	eq := strings.IndexByte(elem, '=')
	rawName := elem
	if eq >= 0 {
		rawName = elem[:eq]
	}
	name := trimOWS(rawName)
	if !isToken(name) {
		return "", Directive{}, false
	}
	name = strings.ToLower(name)
	if eq < 0 {
		return name, Directive{}, true
	}
	dir := parseArgument(elem[eq+1:])
	if len(name) != len(rawName) {
		dir.Malformed = true // whitespace before "="
	}
	return name, dir, true
}

// parseArgument parses the text after "=": a token or a quoted string with
// nothing after it.
func parseArgument(raw string) Directive {
	dir := Directive{HasValue: true}
	if raw != trimLeftOWS(raw) {
		dir.Malformed = true // whitespace after "="
		raw = trimLeftOWS(raw)
	}
	if strings.HasPrefix(raw, `"`) {
		val, rest, ok := unquote(raw)
		dir.Value = val
		if !ok || rest != "" {
			dir.Malformed = true
		}
		return dir
	}
	dir.Value = raw
	if !isToken(raw) {
		dir.Malformed = true
	}
	return dir
}

// unquote reads the quoted-string at the start of s (RFC 9110 §5.6.4),
// resolving quoted-pairs; rest is what follows the closing quote. ok is false
// when the closing quote is missing.
func unquote(s string) (val, rest string, ok bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '"':
			return b.String(), s[i+1:], true
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), "", false
}

// isToken reports whether s is a non-empty RFC 9110 §5.6.2 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTchar(s[i]) {
			return false
		}
	}
	return true
}

func isTchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isOWS(c byte) bool { return c == ' ' || c == '\t' }

func trimLeftOWS(s string) string {
	for s != "" && isOWS(s[0]) {
		s = s[1:]
	}
	return s
}

func trimOWS(s string) string {
	s = trimLeftOWS(s)
	for s != "" && isOWS(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}
