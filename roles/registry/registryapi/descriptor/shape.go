package descriptor

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
)

// members is one decoded JSON object of canonical input: member name → the
// canonical bytes of its value. Canonical input has no duplicate names.
type members map[string]json.RawMessage

// jsonType is the JSON type a member must have.
type jsonType uint8

const (
	tString    jsonType = iota + 1
	tNumber             // any JSON number; integer rules come later
	tObject             // any object
	tArray              // any array (elements judged by the caller)
	tObjects            // array of objects
	tStrings            // array of strings
	tStringMap          // object whose values are strings
)

// field is one member of a shape.
type field struct {
	typ      jsonType
	required bool
}

// shape is the allowed members of an object; open objects (service items)
// take any further member.
type shape struct {
	fields map[string]field
	open   bool
}

// typeName names the JSON type of a canonical value by its first byte.
func typeName(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// decodeObject decodes raw as an object; anything else is malformed.
func decodeObject(l loc, raw json.RawMessage) (members, error) {
	if typeName(raw) != "an object" {
		return nil, malformed(l, ReasonWrongType, "want an object, got %s", typeName(raw))
	}
	var f members
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, malformed(l, ReasonSyntax, "invalid object: %s", clip(err.Error()))
	}
	return f, nil
}

// decodeArray decodes raw as an array; anything else is malformed.
func decodeArray(l loc, raw json.RawMessage) ([]json.RawMessage, error) {
	if typeName(raw) != "an array" {
		return nil, malformed(l, ReasonWrongType, "want an array, got %s", typeName(raw))
	}
	var a []json.RawMessage
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, malformed(l, ReasonSyntax, "invalid array: %s", clip(err.Error()))
	}
	return a, nil
}

// check enforces s on f at l: unknown members, then wrong types, then
// missing required members, each in byte order of the names. The common
// case (no problem) takes a pass in map order; only a failing object is
// walked again in sorted order, so the reported problem is deterministic.
func (s shape) check(l loc, f members) error {
	if s.firstProblem(l, f, false) == nil {
		return nil
	}
	return s.firstProblem(l, f, true)
}

func (s shape) firstProblem(l loc, f members, sorted bool) error {
	keys := maps.Keys(f)
	if sorted {
		keys = slices.Values(slices.Sorted(keys))
	}
	for k := range keys {
		spec, ok := s.fields[k]
		if !ok {
			if s.open {
				continue
			}
			return malformed(l.in(k), ReasonUnknownField, "unknown member %q", clip(k))
		}
		if err := checkType(l.in(k), spec.typ, f[k]); err != nil {
			return err
		}
	}
	names := maps.Keys(s.fields)
	if sorted {
		names = slices.Values(slices.Sorted(names))
	}
	for k := range names {
		if _, ok := f[k]; !ok && s.fields[k].required {
			return malformed(l.in(k), ReasonMissingField, "missing member %q", k)
		}
	}
	return nil
}

// wantName names the JSON type t requires at the top level.
func wantName(t jsonType) string {
	switch t {
	case tString:
		return "a string"
	case tNumber:
		return "a number"
	case tArray, tObjects, tStrings:
		return "an array"
	}
	return "an object"
}

// checkType enforces one member's JSON type.
func checkType(l loc, t jsonType, raw json.RawMessage) error {
	if want, got := wantName(t), typeName(raw); got != want {
		return malformed(l, ReasonWrongType, "want %s, got %s", want, got)
	}
	switch t {
	case tObjects, tStrings:
		return checkElems(l, t, raw)
	case tStringMap:
		f, err := decodeObject(l, raw)
		if err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(f)) {
			if got := typeName(f[k]); got != "a string" {
				return malformed(l.in(k), ReasonWrongType, "want a string, got %s", got)
			}
		}
	}
	return nil
}

// checkElems requires every element of an array to be an object (tObjects)
// or a string (tStrings).
func checkElems(l loc, t jsonType, raw json.RawMessage) error {
	a, err := decodeArray(l, raw)
	if err != nil {
		return err
	}
	want := "an object"
	if t == tStrings {
		want = "a string"
	}
	for i, e := range a {
		if got := typeName(e); got != want {
			return malformed(l, ReasonWrongType, "element %d: want %s, got %s", i, want, got)
		}
	}
	return nil
}

// str returns member k, which the shape check found to be a string ("" if
// absent).
func (f members) str(k string) string {
	raw := f[k]
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]) // canonical: no escapes to undo
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// integer returns member k (a number) as an integer within [lo, hi];
// anything else is bad_request at l.
func (f members) integer(l loc, k string, lo, hi int64) (int64, error) {
	v, err := strconv.ParseFloat(string(f[k]), 64)
	if err != nil || v != math.Trunc(v) {
		return 0, badRequest(l.in(k), ReasonInvalidValue, "%s is not an integer", clip(string(f[k])))
	}
	if v < float64(lo) || v > float64(hi) {
		return 0, badRequest(l.in(k), ReasonInvalidValue, "%s is outside %d…%d", f[k], lo, hi)
	}
	return int64(v), nil
}
