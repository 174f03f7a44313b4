package descriptor

import (
	"fmt"
	"strings"
	"testing"
)

// manySigners sets n signers (keys 1…n) and quorum m of n.
func manySigners(p obj, n, m int) {
	items := []any{}
	for i := 1; i <= n; i++ {
		items = append(items, obj{"kind": "signer", "id": fmt.Sprintf("org:example#k%d", i), "algo": "ed25519", "pubkey": pubB64(byte(i))})
	}
	p["items"] = append(items, obj{"kind": "quorum", "id": "quorum", "m": m, "n": n})
}

// topRuleCases: bad_request rules on members outside items.
var topRuleCases = []ruleCase{
	{name: "version negative", mut: func(p obj) { p["version"] = -1 }, want: bad(ReasonInvalidValue, -1, "version")},
	{name: "version fraction", mut: func(p obj) { p["version"] = 1.5 }, want: bad(ReasonInvalidValue, -1, "version")},
	{name: "malformed before range", raw: withBase(`"version":`, `9007199254740992,"x":`), want: mal(ReasonUnknownField, -1, "x")},
	{name: "version 2^53 alone", mut: func(p obj) { p["version"] = uint64(1 << 53) }, want: bad(ReasonIntegerRange, -1, "version")},
	{name: "version 1e300", raw: func(t testing.TB) []byte {
		return []byte(strings.Replace(string(mustJSON(t, basePayload())), `"version":1}`, `"version":1e300}`, 1))
	}, want: bad(ReasonIntegerRange, -1, "version")},
	{name: "prev_hash uppercase", mut: func(p obj) { p["prev_hash"] = "b3:" + strings.Repeat("AB", 32) }, want: bad(ReasonInvalidValue, -1, "prev_hash")},
	{name: "prev_hash short", mut: func(p obj) { p["prev_hash"] = "b3:abcd" }, want: bad(ReasonInvalidValue, -1, "prev_hash")},
	{name: "prev_hash sha256 prefix", mut: func(p obj) { p["prev_hash"] = "sha256:" + strings.Repeat("ab", 32) }, want: bad(ReasonInvalidValue, -1, "prev_hash")},
	{name: "genesis with nonzero prev", mut: func(p obj) { p["version"] = 0 }, want: bad(ReasonInvalidValue, -1, "prev_hash")},
	{name: "created_at not RFC 3339", mut: func(p obj) { p["created_at"] = "2026-01-02 03:04:05Z" }, want: bad(ReasonInvalidTime, -1, "created_at")},
	{name: "created_at no zone", mut: func(p obj) { p["created_at"] = "2026-01-02T03:04:05" }, want: bad(ReasonInvalidTime, -1, "created_at")},
	{name: "created_at 41 bytes", mut: func(p obj) { p["created_at"] = "2026-01-02T03:04:05.00000000000000000000Z" }, want: bad(ReasonInvalidTime, -1, "created_at")},
	{name: "created_at past skew", mut: func(p obj) { p["created_at"] = "2026-01-02T03:09:05.001Z" }, want: bad(ReasonFutureTime, -1, "created_at")},
	{name: "note 1025 bytes", mut: func(p obj) { p["note"] = strings.Repeat("n", 1025) }, want: bad(ReasonInvalidValue, -1, "note")},
	{name: "note 513 two-byte runes", mut: func(p obj) { p["note"] = strings.Repeat("é", 513) }, want: bad(ReasonInvalidValue, -1, "note")},
	{name: "no items", mut: func(p obj) { p["items"] = []any{} }, want: bad(ReasonItemCount, -1, "items")},
}

func TestParseSetTopRules(t *testing.T) { runRuleCases(t, topRuleCases) }

// itemRuleCases: bad_request item rules (docs/registry.md §1 items, ids, limits).
var itemRuleCases = []ruleCase{
	{name: "unknown kind", mut: func(p obj) { item(p, 5)["kind"] = "gadget" }, want: bad(ReasonUnknownKind, 5, "kind")},
	{name: "unknown kind beats nesting", mut: func(p obj) { item(p, 5)["kind"] = "x"; item(p, 5)["deep"] = nested(20) }, want: bad(ReasonUnknownKind, 5, "kind")},
	{name: "empty kind", mut: func(p obj) { item(p, 5)["kind"] = "" }, want: bad(ReasonUnknownKind, 5, "kind")},
	{name: "kind wrong case", mut: func(p obj) { item(p, 0)["kind"] = "Signer" }, want: bad(ReasonUnknownKind, 0, "kind")},
	{name: "nesting 17", mut: func(p obj) { item(p, 5)["deep"] = nested(14) }, want: bad(ReasonNesting, 5, "deep")},
	{name: "nesting 17 in meta", mut: func(p obj) { item(p, 3)["meta"] = obj{"a": nested(13)} }, want: bad(ReasonNesting, 3, "meta")},
	{name: "integer 2^53", mut: func(p obj) { item(p, 5)["n"] = uint64(1 << 53) }, want: bad(ReasonIntegerRange, 5, "n")},
	{name: "integer -2^53", mut: func(p obj) { item(p, 5)["n"] = -(int64(1) << 53) }, want: bad(ReasonIntegerRange, 5, "n")},
	{name: "integer 2^53+1 rounds", raw: withBase(`"ports":[`, `9007199254740993,`), want: bad(ReasonIntegerRange, 5, "ports")},
	{name: "huge float", raw: withBase(`"ports":[`, `1.5e300,`), want: bad(ReasonIntegerRange, 5, "ports")},
	{name: "huge in meta", mut: func(p obj) { item(p, 0)["meta"] = obj{"x": []any{1e16}} }, want: bad(ReasonIntegerRange, 0, "meta")},
	{name: "signer id uppercase org", mut: func(p obj) { item(p, 0)["id"] = "org:Example#k1" }, want: bad(ReasonInvalidID, 0, "id")},
	{name: "signer id no org", mut: func(p obj) { item(p, 0)["id"] = "example#k1" }, want: bad(ReasonInvalidID, 0, "id")},
	{name: "signer id no key", mut: func(p obj) { item(p, 0)["id"] = "org:example#" }, want: bad(ReasonInvalidID, 0, "id")},
	{name: "signer id org 64", mut: func(p obj) { item(p, 0)["id"] = "org:" + strings.Repeat("a", 64) + "#k" }, want: bad(ReasonInvalidID, 0, "id")},
	{name: "signer id key 65", mut: func(p obj) { item(p, 0)["id"] = "org:a#" + strings.Repeat("k", 65) }, want: bad(ReasonInvalidID, 0, "id")},
	{name: "signer id leading dash", mut: func(p obj) { item(p, 0)["id"] = "org:-a#k" }, want: bad(ReasonInvalidID, 0, "id")},
	{name: "signer id trailing newline", mut: func(p obj) { item(p, 0)["id"] = "org:a#k\n" }, want: bad(ReasonInvalidID, 0, "id")},
	{name: "node id leading dash", mut: func(p obj) { item(p, 3)["id"] = "-node" }, want: bad(ReasonInvalidID, 3, "id")},
	{name: "node id 129", mut: func(p obj) { item(p, 3)["id"] = strings.Repeat("n", 129) }, want: bad(ReasonInvalidID, 3, "id")},
	{name: "tenant id space", mut: func(p obj) { item(p, 4)["id"] = "ac me" }, want: bad(ReasonInvalidID, 4, "id")},
	{name: "service id empty", mut: func(p obj) { item(p, 5)["id"] = "" }, want: bad(ReasonInvalidID, 5, "id")},
	{name: "quorum id other", mut: func(p obj) { item(p, 2)["id"] = "q" }, want: bad(ReasonInvalidID, 2, "id")},
	{name: "duplicate kind and id", mut: func(p obj) {
		item(p, 4)["id"] = "x"
		p["items"] = append(p["items"].([]any), obj{"kind": "tenant", "id": "x", "rps": 0, "burst": 0, "weight": 1, "max_bytes_per_s": 0})
	}, want: bad(ReasonDuplicateItem, 6, "id")},
	{name: "duplicate signer id", mut: func(p obj) { item(p, 1)["id"] = "org:example#k1" }, want: bad(ReasonDuplicateItem, 1, "id")},
	{name: "two quorum items", mut: func(p obj) {
		p["items"] = append(p["items"].([]any), obj{"kind": "quorum", "id": "quorum", "m": 1, "n": 2})
	}, want: bad(ReasonDuplicateItem, 6, "id")},
	{name: "signer algo rsa", mut: func(p obj) { item(p, 0)["algo"] = "rsa" }, want: bad(ReasonInvalidValue, 0, "algo")},
	{name: "signer algo Ed25519", mut: func(p obj) { item(p, 0)["algo"] = "Ed25519" }, want: bad(ReasonInvalidValue, 0, "algo")},
	{name: "pubkey not base64", mut: func(p obj) { item(p, 0)["pubkey"] = "not base64!" }, want: bad(ReasonInvalidValue, 0, "pubkey")},
	{name: "pubkey 31 bytes", mut: func(p obj) { item(p, 0)["pubkey"] = pk(hex32(9)[:31]) }, want: bad(ReasonInvalidValue, 0, "pubkey")},
	{name: "pubkey 33 bytes", mut: func(p obj) { item(p, 0)["pubkey"] = pk(append(hex32(9), 1)) }, want: bad(ReasonInvalidValue, 0, "pubkey")},
	{name: "pubkey url base64", mut: func(p obj) { item(p, 0)["pubkey"] = strings.NewReplacer("+", "-", "/", "_").Replace(pubB64(2)) }, want: bad(ReasonInvalidValue, 0, "pubkey")},
	{name: "pubkey with newline", mut: func(p obj) { item(p, 0)["pubkey"] = pubB64(1)[:20] + "\n" + pubB64(1)[20:] }, want: bad(ReasonInvalidValue, 0, "pubkey")},
	{name: "pubkey unpadded", mut: func(p obj) { item(p, 0)["pubkey"] = strings.TrimRight(pubB64(1), "=") }, want: bad(ReasonInvalidValue, 0, "pubkey")},
	{name: "pubkey identity", mut: func(p obj) { item(p, 0)["pubkey"] = pk(append([]byte{1}, make([]byte, 31)...)) }, want: bad(ReasonInvalidValue, 0, "pubkey")},
	{name: "pubkey zero (order 4)", mut: func(p obj) { item(p, 0)["pubkey"] = pk(make([]byte, 32)) }, want: bad(ReasonInvalidValue, 0, "pubkey")},
	{name: "pubkey duplicate", mut: func(p obj) { item(p, 1)["pubkey"] = pubB64(1) }, want: bad(ReasonInvalidValue, 1, "pubkey")},
	{name: "no quorum item", mut: func(p obj) { p["items"] = append(p["items"].([]any)[:2], p["items"].([]any)[3:]...) }, want: bad(ReasonQuorum, -1, "items")},
	{name: "quorum n not signers", mut: func(p obj) { item(p, 2)["n"] = 3 }, want: bad(ReasonQuorum, 2, "n")},
	{name: "quorum n fewer", mut: func(p obj) { item(p, 2)["n"] = 1 }, want: bad(ReasonQuorum, 2, "n")},
	{name: "quorum m 0", mut: func(p obj) { item(p, 2)["m"] = 0 }, want: bad(ReasonInvalidValue, 2, "m")},
	{name: "quorum m > n", mut: func(p obj) { item(p, 2)["m"] = 3 }, want: bad(ReasonInvalidValue, 2, "m")},
	{name: "quorum m fraction", mut: func(p obj) { item(p, 2)["m"] = 1.5 }, want: bad(ReasonInvalidValue, 2, "m")},
	{name: "quorum n 0", mut: func(p obj) { item(p, 2)["n"] = 0; item(p, 2)["m"] = 0 }, want: bad(ReasonInvalidValue, 2, "n")},
	{name: "quorum n 33", mut: func(p obj) { manySigners(p, 33, 1) }, want: bad(ReasonInvalidValue, 33, "n")},
	{name: "no signers", mut: func(p obj) { p["items"] = p["items"].([]any)[2:] }, want: bad(ReasonQuorum, 0, "n")},
	{name: "roles empty", mut: func(p obj) { item(p, 3)["roles"] = []any{}; delete(item(p, 3), "urls") }, want: bad(ReasonInvalidValue, 3, "roles")},
	{name: "roles unknown", mut: func(p obj) { item(p, 3)["roles"] = []any{"storage", "cache"} }, want: bad(ReasonInvalidValue, 3, "roles")},
	{name: "roles repeat", mut: func(p obj) { item(p, 3)["roles"] = []any{"storage", "storage"} }, want: bad(ReasonInvalidValue, 3, "roles")},
	{name: "roles wrong case", mut: func(p obj) { item(p, 3)["roles"] = []any{"Storage"} }, want: bad(ReasonInvalidValue, 3, "roles")},
	{name: "url key not in roles", mut: func(p obj) { item(p, 3)["urls"] = obj{"edge": "http://x"} }, want: bad(ReasonInvalidValue, 3, "urls.edge")},
	{name: "url relative", mut: func(p obj) { item(p, 3)["urls"] = obj{"index": "/x"} }, want: bad(ReasonInvalidValue, 3, "urls.index")},
	{name: "url no host", mut: func(p obj) { item(p, 3)["urls"] = obj{"index": "http:///x"} }, want: bad(ReasonInvalidValue, 3, "urls.index")},
	{name: "url ftp", mut: func(p obj) { item(p, 3)["urls"] = obj{"index": "ftp://h/x"} }, want: bad(ReasonInvalidValue, 3, "urls.index")},
	{name: "url user info", mut: func(p obj) { item(p, 3)["urls"] = obj{"index": "https://u:p@h/"} }, want: bad(ReasonInvalidValue, 3, "urls.index")},
	{name: "url unparsable", mut: func(p obj) { item(p, 3)["urls"] = obj{"index": "http://h/%zz"} }, want: bad(ReasonInvalidValue, 3, "urls.index")},
	{name: "url 257 bytes", mut: func(p obj) { item(p, 3)["urls"] = obj{"index": "http://h/" + strings.Repeat("p", 248)} }, want: bad(ReasonInvalidValue, 3, "urls.index")},
	{name: "zone bad char", mut: func(p obj) { item(p, 3)["zone"] = "eu 1" }, want: bad(ReasonInvalidValue, 3, "zone")},
	{name: "zone 65", mut: func(p obj) { item(p, 3)["zone"] = strings.Repeat("z", 65) }, want: bad(ReasonInvalidValue, 3, "zone")},
	{name: "rps negative", mut: func(p obj) { item(p, 4)["rps"] = -0.5 }, want: bad(ReasonInvalidValue, 4, "rps")},
	{name: "burst negative", mut: func(p obj) { item(p, 4)["burst"] = -1 }, want: bad(ReasonInvalidValue, 4, "burst")},
	{name: "burst fraction", mut: func(p obj) { item(p, 4)["burst"] = 1.5 }, want: bad(ReasonInvalidValue, 4, "burst")},
	{name: "weight 0", mut: func(p obj) { item(p, 4)["weight"] = 0 }, want: bad(ReasonInvalidValue, 4, "weight")},
	{name: "weight 1001", mut: func(p obj) { item(p, 4)["weight"] = 1001 }, want: bad(ReasonInvalidValue, 4, "weight")},
	{name: "max_bytes_per_s negative", mut: func(p obj) { item(p, 4)["max_bytes_per_s"] = -1 }, want: bad(ReasonInvalidValue, 4, "max_bytes_per_s")},
	{name: "first failing item wins", mut: func(p obj) { item(p, 4)["weight"] = 0; item(p, 3)["zone"] = "!" }, want: bad(ReasonInvalidValue, 3, "zone")},
}

func TestParseSetItemRules(t *testing.T) { runRuleCases(t, itemRuleCases) }

// TestItemCountCap exercises the 2048-item cap directly: a set of 2049
// items cannot fit in 49,152 canonical bytes, so ParseSet's size stage
// answers first (the next test), but the rule holds on its own.
func TestItemCountCap(t *testing.T) {
	err := (&Set{}).applyItems(&draft{items: make([]members, MaxItems+1)})
	checkErr(t, err, bad(ReasonItemCount, -1, "items"))
}
