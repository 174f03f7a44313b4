package descriptor

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

// ruleCase is one bad payload: a mutation of basePayload (or raw bytes) and
// the error ParseSet must return.
type ruleCase struct {
	name string
	mut  func(p obj)
	raw  func(t testing.TB) []byte
	want wantErr
}

func (c ruleCase) input(t testing.TB) []byte {
	if c.raw != nil {
		return c.raw(t)
	}
	p := basePayload()
	c.mut(p)
	return mustJSON(t, p)
}

// withBase splices text into the JSON of basePayload after the first
// occurrence of anchor.
func withBase(anchor, insert string) func(t testing.TB) []byte {
	return func(t testing.TB) []byte {
		b := string(mustJSON(t, basePayload()))
		i := strings.Index(b, anchor)
		if i < 0 {
			t.Fatalf("anchor %q not in %s", anchor, b)
		}
		i += len(anchor)
		return []byte(b[:i] + insert + b[i:])
	}
}

func rawBytes(s string) func(testing.TB) []byte { return func(testing.TB) []byte { return []byte(s) } }

// malformedCases: syntax and shape (docs/registry.md §3 row 1).
var malformedCases = []ruleCase{
	{name: "not JSON", raw: rawBytes("nope"), want: mal(ReasonSyntax, -1, "")},
	{name: "empty", raw: rawBytes(""), want: mal(ReasonSyntax, -1, "")},
	{name: "whitespace only", raw: rawBytes(" \n"), want: mal(ReasonSyntax, -1, "")},
	{name: "invalid UTF-8", raw: withBase(`"note":"`, "\xff"), want: mal(ReasonSyntax, -1, "")},
	{name: "trailing data", raw: withBase(`"version":1}`, ` {}`), want: mal(ReasonSyntax, -1, "")},
	{name: "duplicate top key", raw: withBase(`{`, `"note":"x",`), want: mal(ReasonSyntax, -1, "")},
	{name: "duplicate item key", raw: withBase(`"items":[{`, `"id":"x",`), want: mal(ReasonSyntax, -1, "")},
	{name: "duplicate key after unescape", raw: withBase(`{`, `"n\u006fte":"x",`), want: mal(ReasonSyntax, -1, "")},
	{name: "lone high surrogate", raw: withBase(`"note":"`, `\ud800`), want: mal(ReasonSyntax, -1, "")},
	{name: "lone low surrogate", raw: withBase(`"note":"`, `\udc00x`), want: mal(ReasonSyntax, -1, "")},
	{name: "NaN-like literal", raw: withBase(`"version":`, `NaN,"x":`), want: mal(ReasonSyntax, -1, "")},
	{name: "top-level array", raw: rawBytes(`[]`), want: mal(ReasonWrongType, -1, "")},
	{name: "top-level null", raw: rawBytes(`null`), want: mal(ReasonWrongType, -1, "")},
	{name: "unknown top member", mut: func(p obj) { p["extra"] = 1 }, want: mal(ReasonUnknownField, -1, "extra")},
	{name: "missing version", mut: func(p obj) { delete(p, "version") }, want: mal(ReasonMissingField, -1, "version")},
	{name: "missing prev_hash", mut: func(p obj) { delete(p, "prev_hash") }, want: mal(ReasonMissingField, -1, "prev_hash")},
	{name: "missing created_at", mut: func(p obj) { delete(p, "created_at") }, want: mal(ReasonMissingField, -1, "created_at")},
	{name: "missing items", mut: func(p obj) { delete(p, "items") }, want: mal(ReasonMissingField, -1, "items")},
	{name: "version string", mut: func(p obj) { p["version"] = "1" }, want: mal(ReasonWrongType, -1, "version")},
	{name: "version null", mut: func(p obj) { p["version"] = nil }, want: mal(ReasonWrongType, -1, "version")},
	{name: "note null", mut: func(p obj) { p["note"] = nil }, want: mal(ReasonWrongType, -1, "note")},
	{name: "note number", mut: func(p obj) { p["note"] = 1 }, want: mal(ReasonWrongType, -1, "note")},
	{name: "items object", mut: func(p obj) { p["items"] = obj{} }, want: mal(ReasonWrongType, -1, "items")},
	{name: "item not object", mut: func(p obj) { p["items"].([]any)[2] = "quorum" }, want: mal(ReasonWrongType, 2, "")},
	{name: "item missing kind", mut: func(p obj) { delete(item(p, 3), "kind") }, want: mal(ReasonMissingField, 3, "kind")},
	{name: "item kind number", mut: func(p obj) { item(p, 3)["kind"] = 5 }, want: mal(ReasonWrongType, 3, "kind")},
	{name: "signer unknown field", mut: func(p obj) { item(p, 1)["weight"] = 1 }, want: mal(ReasonUnknownField, 1, "weight")},
	{name: "quorum unknown field", mut: func(p obj) { item(p, 2)["k"] = 1 }, want: mal(ReasonUnknownField, 2, "k")},
	{name: "node unknown field", mut: func(p obj) { item(p, 3)["url"] = "x" }, want: mal(ReasonUnknownField, 3, "url")},
	{name: "tenant unknown field", mut: func(p obj) { item(p, 4)["rate"] = 1 }, want: mal(ReasonUnknownField, 4, "rate")},
	{name: "signer missing id", mut: func(p obj) { delete(item(p, 0), "id") }, want: mal(ReasonMissingField, 0, "id")},
	{name: "signer missing pubkey", mut: func(p obj) { delete(item(p, 0), "pubkey") }, want: mal(ReasonMissingField, 0, "pubkey")},
	{name: "signer missing algo", mut: func(p obj) { delete(item(p, 0), "algo") }, want: mal(ReasonMissingField, 0, "algo")},
	{name: "quorum missing m", mut: func(p obj) { delete(item(p, 2), "m") }, want: mal(ReasonMissingField, 2, "m")},
	{name: "node missing roles", mut: func(p obj) { delete(item(p, 3), "roles") }, want: mal(ReasonMissingField, 3, "roles")},
	{name: "tenant missing weight", mut: func(p obj) { delete(item(p, 4), "weight") }, want: mal(ReasonMissingField, 4, "weight")},
	{name: "service missing id", mut: func(p obj) { delete(item(p, 5), "id") }, want: mal(ReasonMissingField, 5, "id")},
	{name: "pubkey number", mut: func(p obj) { item(p, 0)["pubkey"] = 1 }, want: mal(ReasonWrongType, 0, "pubkey")},
	{name: "quorum m string", mut: func(p obj) { item(p, 2)["m"] = "1" }, want: mal(ReasonWrongType, 2, "m")},
	{name: "roles string", mut: func(p obj) { item(p, 3)["roles"] = "storage" }, want: mal(ReasonWrongType, 3, "roles")},
	{name: "roles element number", mut: func(p obj) { item(p, 3)["roles"] = []any{"storage", 1} }, want: mal(ReasonWrongType, 3, "roles")},
	{name: "urls array", mut: func(p obj) { item(p, 3)["urls"] = []any{} }, want: mal(ReasonWrongType, 3, "urls")},
	{name: "urls value number", mut: func(p obj) { item(p, 3)["urls"] = obj{"storage": 1} }, want: mal(ReasonWrongType, 3, "urls.storage")},
	{name: "zone null", mut: func(p obj) { item(p, 3)["zone"] = nil }, want: mal(ReasonWrongType, 3, "zone")},
	{name: "tenant rps string", mut: func(p obj) { item(p, 4)["rps"] = "1" }, want: mal(ReasonWrongType, 4, "rps")},
	{name: "meta array", mut: func(p obj) { item(p, 0)["meta"] = []any{} }, want: mal(ReasonWrongType, 0, "meta")},
	{name: "meta null", mut: func(p obj) { item(p, 2)["meta"] = nil }, want: mal(ReasonWrongType, 2, "meta")},
	{name: "service meta string", mut: func(p obj) { item(p, 5)["meta"] = "x" }, want: mal(ReasonWrongType, 5, "meta")},
	{name: "service id number", mut: func(p obj) { item(p, 5)["id"] = 7 }, want: mal(ReasonWrongType, 5, "id")},
	{name: "format verbs in a member name", mut: func(p obj) { item(p, 0)["%s%d%!"] = 1 }, want: mal(ReasonUnknownField, 0, "%s%d%!")},
	{name: "long member name clipped", mut: func(p obj) { p[strings.Repeat("k", 200)] = 1 }, want: mal(ReasonUnknownField, -1, clip(strings.Repeat("k", 200)))},
	{name: "malformed before unknown kind", mut: func(p obj) { item(p, 3)["kind"] = "gadget"; item(p, 4)["x"] = 1 }, want: mal(ReasonUnknownField, 4, "x")},
}

func TestParseSetMalformed(t *testing.T) { runRuleCases(t, malformedCases) }

func runRuleCases(t *testing.T, cases []ruleCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := ParseSet(c.input(t), DefaultLimits(), testNow)
			if err == nil {
				t.Fatalf("accepted: %s", s.Canonical)
			}
			checkErr(t, err, c.want)
		})
	}
}

// pk returns the std base64 of raw key bytes.
func pk(raw []byte) string { return base64.StdEncoding.EncodeToString(raw) }

func hex32(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }
