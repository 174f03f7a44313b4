// Package ranges holds the HTTP Range and conditional-request helpers that every
// ron role shares (docs/architecture.md §5, docs/storage.md §4 and §10, docs/edge.md §2).
// No role parses Range, If-Match, If-None-Match or If-Range itself.
//
// The package is pure net/http. A handler typically does:
//
//	p := ranges.NewPlan(r, size, etag, contentType, maxParts)
//	h := w.Header()
//	h.Set("ETag", etag) // and Cache-Control etc.: the caller's job
//	p.SetHeaders(h, size, contentType)
//	switch p.Status {
//	case http.StatusPreconditionFailed, http.StatusRequestedRangeNotSatisfiable:
//		// write the error envelope
//	default:
//		w.WriteHeader(p.Status)
//		if r.Method != http.MethodHead {
//			err = p.WriteBody(w, size, contentType, read)
//		}
//	}
//
// Decisions where RFC 9110 leaves a choice follow docs/storage.md §4: another
// range unit, more than maxParts ranges, satisfiable lengths summing past the
// size, and any Range on an empty representation are ignored (200 full); a
// malformed bytes= set or one with no satisfiable range is answered with 416.
package ranges

import (
	"strconv"
	"strings"
)

// Outcome is the verdict of [ParseRange].
type Outcome int

const (
	// Ignore means the Range header does not apply: serve 200 with the whole
	// representation. It is also the outcome for an absent (empty) header.
	Ignore Outcome = iota
	// Satisfiable means serve 206 with the returned ranges.
	Satisfiable
	// Unsatisfiable means answer 416 with Content-Range "bytes */N".
	Unsatisfiable
)

// String returns "ignore", "satisfiable" or "unsatisfiable".
func (o Outcome) String() string {
	switch o {
	case Ignore:
		return "ignore"
	case Satisfiable:
		return "satisfiable"
	case Unsatisfiable:
		return "unsatisfiable"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// ByteRange is a satisfiable, clipped range [Start, Start+Length) of a
// representation. Ranges returned by this package always have Start >= 0,
// Length >= 1 and Start+Length <= size.
type ByteRange struct{ Start, Length int64 }

// End returns the inclusive last byte position, Start+Length-1.
func (r ByteRange) End() int64 { return r.Start + r.Length - 1 }

// ContentRange renders the Content-Range value "bytes a-b/N" for a
// representation of size bytes, where a = Start and b = Start+Length-1.
func (r ByteRange) ContentRange(size int64) string {
	b := make([]byte, 0, 64)
	b = append(b, "bytes "...)
	b = strconv.AppendInt(b, r.Start, 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, r.End(), 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, size, 10)
	return string(b)
}

// UnsatisfiedContentRange renders the Content-Range value "bytes */N" that a
// 416 answer carries.
func UnsatisfiedContentRange(size int64) string {
	return "bytes */" + strconv.FormatInt(size, 10)
}

// ParseRange parses the Range header value header against a representation of
// size bytes, allowing at most maxParts ranges (values below 1 count as 1).
//
// It returns Ignore (and no ranges) for an empty header, a size <= 0 (an empty
// object ignores Range), a unit other than "bytes" (unit matched
// case-insensitively), more than maxParts range specs, or satisfiable lengths
// summing past size. It returns Unsatisfiable (and no ranges) for a malformed
// bytes= set (non-digits, a > b, no range spec at all, overflowing numbers,
// garbage) or when no spec is satisfiable (start >= size, "-0"). Otherwise it
// returns Satisfiable with at least one and at most maxParts ranges in request
// order, each clipped to the size and non-empty; unsatisfiable specs are dropped.
// Whitespace around the unit, the specs and the commas is tolerated, and empty
// list elements ("0-1,,3-4") are skipped (RFC 9110 §5.6.1.2).
func ParseRange(header string, size int64, maxParts int) ([]ByteRange, Outcome) {
	if header == "" || size <= 0 {
		return nil, Ignore
	}
	unit, set, hasEq := strings.Cut(header, "=")
	if !strings.EqualFold(trimOWS(unit), "bytes") {
		return nil, Ignore
	}
	if !hasEq {
		return nil, Unsatisfiable
	}
	n := countSpecs(set)
	if n > max(maxParts, 1) {
		return nil, Ignore
	}
	if n == 0 {
		return nil, Unsatisfiable
	}
	return parseSet(set, size, n)
}

// parseSet parses a bytes range-set holding n non-empty specs.
func parseSet(set string, size int64, n int) ([]ByteRange, Outcome) {
	out := make([]ByteRange, 0, n)
	var sum int64
	for rest := set; rest != ""; {
		var spec string
		spec, rest, _ = strings.Cut(rest, ",")
		spec = trimOWS(spec)
		if spec == "" {
			continue
		}
		r, ok, valid := parseSpec(spec, size)
		if !valid {
			return nil, Unsatisfiable
		}
		if !ok {
			continue
		}
		if r.Length > size-sum {
			return nil, Ignore // lengths sum past the size
		}
		sum += r.Length
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, Unsatisfiable
	}
	return out, Satisfiable
}

// countSpecs counts the non-empty comma-separated elements of set.
func countSpecs(set string) int {
	n := 0
	for rest := set; rest != ""; {
		var spec string
		spec, rest, _ = strings.Cut(rest, ",")
		if trimOWS(spec) != "" {
			n++
		}
	}
	return n
}

// parseSpec parses one non-empty range spec ("a-b", "a-" or "-n") against size.
// valid is false for a syntax error; ok is false for a valid but unsatisfiable
// spec; otherwise r is the clipped, non-empty range.
func parseSpec(spec string, size int64) (r ByteRange, ok, valid bool) {
	first, last, found := strings.Cut(spec, "-")
	if !found {
		return ByteRange{}, false, false
	}
	first, last = trimOWS(first), trimOWS(last)
	if first == "" {
		return suffixRange(last, size)
	}
	start, okStart := parseDigits(first)
	if !okStart {
		return ByteRange{}, false, false
	}
	end := size - 1
	if last != "" {
		e, okEnd := parseDigits(last)
		if !okEnd || e < start {
			return ByteRange{}, false, false
		}
		end = min(e, size-1)
	}
	if start >= size {
		return ByteRange{}, false, true
	}
	return ByteRange{Start: start, Length: end - start + 1}, true, true
}

// suffixRange parses the suffix length of a "-n" spec: the last n bytes.
func suffixRange(last string, size int64) (r ByteRange, ok, valid bool) {
	n, okN := parseDigits(last)
	if !okN {
		return ByteRange{}, false, false
	}
	if n == 0 {
		return ByteRange{}, false, true
	}
	n = min(n, size)
	return ByteRange{Start: size - n, Length: n}, true, true
}

// parseDigits parses a non-empty string of ASCII digits that fits in an int64.
func parseDigits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// trimOWS trims optional whitespace (SP and HTAB, RFC 9110 §5.6.3).
func trimOWS(s string) string {
	return strings.Trim(s, " \t")
}
