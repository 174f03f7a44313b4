package descriptor

import (
	"reflect"
	"strings"
	"testing"
)

func trustRootsJSON(t testing.TB, mut func(o obj)) []byte {
	o := obj{
		"schema_version": "1.0.0",
		"signers": []any{
			obj{"id": k(1), "algo": "ed25519", "pubkey": pubB64(1)},
			obj{"kind": "signer", "id": k(2), "algo": "ed25519", "pubkey": pubB64(2)},
			obj{"id": k(3), "algo": "ed25519", "pubkey": pubB64(3)},
		},
		"quorum": obj{"m": 2, "n": 3},
	}
	if mut != nil {
		mut(o)
	}
	return mustJSON(t, o)
}

func rootSignerAt(o obj, i int) obj { return o["signers"].([]any)[i].(obj) }

func testGenesis(t testing.TB) *Set {
	t.Helper()
	tr, err := ParseTrustRoots(trustRootsJSON(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := Genesis(tr, testNow)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestTrustRootsAndGenesis(t *testing.T) {
	raw := trustRootsJSON(t, nil)
	canonical, err := Canonicalize(raw)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ParseTrustRoots(raw, PayloadB3(canonical))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Signers) != 3 || tr.Signers[2].ID != k(3) || tr.Quorum != (Quorum{2, 3}) {
		t.Fatalf("trust roots %+v", tr)
	}
	g, err := Genesis(tr, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if g.Version != 0 || g.PrevHash != ZeroHash || g.CreatedAt != "2026-01-02T03:04:05.000Z" || g.Note != "" ||
		g.Quorum != tr.Quorum || !reflect.DeepEqual(g.Signers, tr.Signers) || len(g.Nodes)+len(g.Tenants)+len(g.Services) != 0 {
		t.Fatalf("genesis %+v", g)
	}
	want := `{"created_at":"2026-01-02T03:04:05.000Z","items":[{"algo":"ed25519","id":"org:example#k1","kind":"signer","pubkey":"` + pubB64(1) + `"},`
	if !strings.HasPrefix(string(g.Canonical), want) || !strings.HasSuffix(string(g.Canonical), `{"id":"quorum","kind":"quorum","m":2,"n":3}],"prev_hash":"`+ZeroHash+`","version":0}`) {
		t.Fatalf("genesis payload %s", g.Canonical)
	}
	if again, _ := Genesis(tr, testNow); again.B3 != g.B3 {
		t.Fatal("Genesis is not deterministic")
	}
	if _, err := Genesis(TrustRoots{Signers: tr.Signers, Quorum: Quorum{M: 4, N: 3}}, testNow); err == nil {
		t.Fatal("Genesis accepted m > n")
	}
}

func TestParseTrustRootsBadInput(t *testing.T) {
	cases := []struct {
		name string
		raw  []byte
		pin  string
		want wantErr
	}{
		{"not JSON", []byte("x"), "", mal(ReasonSyntax, -1, "")},
		{"pin mismatch", trustRootsJSON(t, nil), someB3, bad(ReasonPinMismatch, -1, "")},
		{"unknown member", trustRootsJSON(t, func(o obj) { o["items"] = []any{} }), "", mal(ReasonUnknownField, -1, "items")},
		{"missing quorum", trustRootsJSON(t, func(o obj) { delete(o, "quorum") }), "", mal(ReasonMissingField, -1, "quorum")},
		{"signer unknown member", trustRootsJSON(t, func(o obj) { rootSignerAt(o, 0)["meta"] = obj{} }), "", mal(ReasonUnknownField, -1, "signers[0].meta")},
		{"signer missing pubkey", trustRootsJSON(t, func(o obj) { delete(rootSignerAt(o, 1), "pubkey") }), "", mal(ReasonMissingField, -1, "signers[1].pubkey")},
		{"quorum extra member", trustRootsJSON(t, func(o obj) { o["quorum"].(obj)["id"] = "quorum" }), "", mal(ReasonUnknownField, -1, "quorum.id")},
		{"quorum m string", trustRootsJSON(t, func(o obj) { o["quorum"].(obj)["m"] = "2" }), "", mal(ReasonWrongType, -1, "quorum.m")},
		{"schema_version 2", trustRootsJSON(t, func(o obj) { o["schema_version"] = "2.0.0" }), "", bad(ReasonSchema, -1, "schema_version")},
		{"kind not signer", trustRootsJSON(t, func(o obj) { rootSignerAt(o, 1)["kind"] = "node" }), "", bad(ReasonInvalidValue, -1, "signers[1].kind")},
		{"bad signer id", trustRootsJSON(t, func(o obj) { rootSignerAt(o, 2)["id"] = "k3" }), "", bad(ReasonInvalidID, -1, "signers[2].id")},
		{"duplicate signer id", trustRootsJSON(t, func(o obj) { rootSignerAt(o, 2)["id"] = k(1) }), "", bad(ReasonDuplicateItem, -1, "signers[2].id")},
		{"bad algo", trustRootsJSON(t, func(o obj) { rootSignerAt(o, 0)["algo"] = "p256" }), "", bad(ReasonInvalidValue, -1, "signers[0].algo")},
		{"small-order pubkey", trustRootsJSON(t, func(o obj) { rootSignerAt(o, 0)["pubkey"] = pk(make([]byte, 32)) }), "", bad(ReasonInvalidValue, -1, "signers[0].pubkey")},
		{"duplicate pubkey", trustRootsJSON(t, func(o obj) { rootSignerAt(o, 2)["pubkey"] = pubB64(1) }), "", bad(ReasonInvalidValue, -1, "signers[2].pubkey")},
		{"n differs", trustRootsJSON(t, func(o obj) { o["quorum"] = obj{"m": 2, "n": 2} }), "", bad(ReasonQuorum, -1, "quorum.n")},
		{"m > n", trustRootsJSON(t, func(o obj) { o["quorum"] = obj{"m": 4, "n": 3} }), "", bad(ReasonInvalidValue, -1, "quorum.m")},
		{"m 0", trustRootsJSON(t, func(o obj) { o["quorum"] = obj{"m": 0, "n": 3} }), "", bad(ReasonInvalidValue, -1, "quorum.m")},
		{"no signers", trustRootsJSON(t, func(o obj) { o["signers"] = []any{}; o["quorum"] = obj{"m": 1, "n": 1} }), "", bad(ReasonQuorum, -1, "quorum.n")},
		{"huge number", trustRootsJSON(t, func(o obj) { o["quorum"] = obj{"m": 1e20, "n": 3} }), "", bad(ReasonIntegerRange, -1, "quorum")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseTrustRoots(c.raw, c.pin)
			checkErr(t, err, c.want)
		})
	}
}

// TestTrustRootsPinIsOfJCS: the pin is over the file's canonical form, so
// reformatting the file keeps it valid.
func TestTrustRootsPinIsOfJCS(t *testing.T) {
	raw := trustRootsJSON(t, nil)
	canonical, _ := Canonicalize(raw)
	pretty := []byte(strings.ReplaceAll(string(raw), ",", ",\n  "))
	if _, err := ParseTrustRoots(pretty, PayloadB3(canonical)); err != nil {
		t.Fatal(err)
	}
	_, err := ParseTrustRoots(pretty, PayloadB3(raw[:len(raw)-1]))
	checkErr(t, err, bad(ReasonPinMismatch, -1, ""))
}
