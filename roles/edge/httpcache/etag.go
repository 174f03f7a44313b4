package httpcache

import (
	"net/http"
	"time"
)

// ETag is a parsed entity-tag (RFC 9110 §8.8.3).
type ETag struct {
	Weak   bool
	Opaque string // the characters between the quotes
}

// String returns the entity-tag in its wire form, `"x"` or `W/"x"`.
func (e ETag) String() string {
	if e.Weak {
		return `W/"` + e.Opaque + `"`
	}
	return `"` + e.Opaque + `"`
}

// StrongEqual is the strong comparison: both strong and equal opaque tags.
func (e ETag) StrongEqual(o ETag) bool { return !e.Weak && !o.Weak && e.Opaque == o.Opaque }

// WeakEqual is the weak comparison: equal opaque tags, weakness ignored.
func (e ETag) WeakEqual(o ETag) bool { return e.Opaque == o.Opaque }

// ParseETag parses `[ "W/" ] DQUOTE *etagc DQUOTE` with etagc = %x21 /
// %x23-7E / obs-text. "W/" is case-sensitive; an unquoted tag, a lower-case
// "w/", a backslash instead of the slash, or anything after the closing quote
// is invalid. Surrounding whitespace is ignored.
func ParseETag(s string) (ETag, bool) {
	s = trimOWS(s)
	var e ETag
	if len(s) >= 2 && s[:2] == "W/" {
		e.Weak = true
		s = s[2:]
	}
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return ETag{}, false
	}
	opaque := s[1 : len(s)-1]
	for i := 0; i < len(opaque); i++ {
		if c := opaque[i]; c < 0x21 || c == '"' || c == 0x7f {
			return ETag{}, false
		}
	}
	e.Opaque = opaque
	return e, true
}

// Validators are the validators a response carries (RFC 9110 §8.8).
type Validators struct {
	ETag            ETag
	HasETag         bool // one valid ETag line
	ETagInvalid     bool // an ETag field is present but unusable (reason etag_invalid)
	LastModified    time.Time
	HasLastModified bool
}

// Any reports whether there is a usable validator.
func (v Validators) Any() bool { return v.HasETag || v.HasLastModified }

// ValidatorsOf reads the validators of a response header. Several ETag lines,
// or one that is not a valid entity-tag, give no ETag validator and set
// ETagInvalid (docs/edge.md §7.2, §13: stored without a validator).
func ValidatorsOf(h http.Header) Validators {
	var v Validators
	switch lines := h.Values("ETag"); len(lines) {
	case 0:
	case 1:
		v.ETag, v.HasETag = ParseETag(lines[0])
		v.ETagInvalid = !v.HasETag
	default:
		v.ETagInvalid = true
	}
	v.LastModified, v.HasLastModified = LastModified(h)
	return v
}
