package httpcache

import (
	"net/http"
	"strconv"
	"strings"
)

// Source names the field the effective response directives came from.
type Source uint8

const (
	// SourceCacheControl: Cache-Control (and Expires) govern the response.
	SourceCacheControl Source = iota
	// SourceCDN: a valid, non-empty CDN-Cache-Control governs the response;
	// Cache-Control and Expires are ignored (RFC 9213 §2.1).
	SourceCDN
)

// cdnIntegerDirectives must carry an Integer ≥ 0 in CDN-Cache-Control, or the
// whole field is invalid (docs/edge.md §7.3).
var cdnIntegerDirectives = []string{"max-age", "s-maxage", "stale-while-revalidate", "stale-if-error"}

// Effective returns the directives that govern a response for the edge
// (docs/edge.md §7.3): CDN-Cache-Control when it is a valid, non-empty
// RFC 8941 dictionary whose max-age, s-maxage and stale-* members are
// Integers ≥ 0; Cache-Control otherwise.
func Effective(h http.Header) (Directives, Source) {
	if d, ok := ParseCDNCacheControl(h.Values("CDN-Cache-Control")); ok {
		return d, SourceCDN
	}
	return ParseCacheControl(h.Values("Cache-Control")), SourceCacheControl
}

// ParseCDNCacheControl parses CDN-Cache-Control lines (RFC 9213) into
// Directives. ok is false when the field is absent, empty or invalid, in
// which case it must be ignored as a whole. Boolean-false members count as
// absent; Integers keep their decimal text (saturated at 2^31); Strings and
// Tokens keep their text; inner lists become their members joined by ", ".
func ParseCDNCacheControl(lines []string) (Directives, bool) {
	if len(lines) == 0 {
		return nil, false
	}
	dict, err := parseSFDictionary(lines)
	if err != nil || len(dict) == 0 {
		return nil, false
	}
	for _, name := range cdnIntegerDirectives {
		if v, ok := dict[name]; ok && (v.kind != sfInteger || v.num < 0) {
			return nil, false
		}
	}
	d := Directives{}
	for name, v := range dict {
		if dir, ok := sfDirective(v); ok {
			d[name] = dir
		}
	}
	return d, true
}

// sfDirective converts one dictionary member to a Directive.
func sfDirective(v sfValue) (Directive, bool) {
	switch v.kind {
	case sfBoolean:
		return Directive{}, v.flag
	case sfInteger:
		return Directive{Value: strconv.FormatInt(min(v.num, MaxDeltaSeconds), 10), HasValue: true}, true
	case sfInnerList:
		parts := make([]string, 0, len(v.list))
		for _, item := range v.list {
			parts = append(parts, item.text)
		}
		return Directive{Value: strings.Join(parts, ", "), HasValue: true}, true
	}
	return Directive{Value: v.text, HasValue: true}, true
}
