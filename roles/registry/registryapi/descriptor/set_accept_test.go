package descriptor

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
)

func TestParseSetBase(t *testing.T) {
	s, err := ParseSet(mustJSON(t, basePayload()), DefaultLimits(), testNow)
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 1 || s.PrevHash != basePayload()["prev_hash"] || s.CreatedAt != "2026-01-02T03:04:05Z" || s.Note != "base" {
		t.Fatalf("header: %+v", s)
	}
	if s.B3 != PayloadB3(s.Canonical) || !IsCanonical(s.Canonical) {
		t.Fatalf("B3 %s or canonical form wrong", s.B3)
	}
	if len(s.Signers) != 2 || s.Signers[1].ID != "org:example#k2" || s.Signers[1].PubkeyB64 != pubB64(2) ||
		!bytes.Equal(s.Signers[1].Pubkey, testKey(2).Public().(ed25519.PublicKey)) || s.Signers[0].Algo != AlgoEd25519 {
		t.Fatalf("signers: %+v", s.Signers)
	}
	if s.Quorum != (Quorum{M: 1, N: 2}) {
		t.Fatalf("quorum %+v", s.Quorum)
	}
	wantNode := Node{ID: "node-a", Roles: []string{"storage", "index"}, URLs: map[string]string{"storage": "http://10.0.0.1:5303"}, Zone: "eu-1"}
	if len(s.Nodes) != 1 || !reflect.DeepEqual(s.Nodes[0], wantNode) {
		t.Fatalf("nodes %+v", s.Nodes)
	}
	if len(s.Tenants) != 1 || s.Tenants[0] != (Tenant{ID: "acme", RPS: 10.5, Burst: 20, Weight: 100}) {
		t.Fatalf("tenants %+v", s.Tenants)
	}
	wantSvc := `{"id":"svc/web","kind":"service","meta":{"owner":"ops"},"ports":[80,443]}`
	if len(s.Services) != 1 || string(s.Services[0]) != wantSvc {
		t.Fatalf("services %s", s.Services)
	}
	if got := s.SignerIDs(); !reflect.DeepEqual(got, []string{"org:example#k1", "org:example#k2"}) {
		t.Fatalf("SignerIDs %v", got)
	}
}

// TestParseSetCanonicalises: whitespace, key order, escapes and number
// spellings do not change the canonical bytes or payload_b3; item order is
// kept as written.
func TestParseSetCanonicalises(t *testing.T) {
	a := `{"version":1,"prev_hash":"b3:` + strings.Repeat("ab", 32) + `","created_at":"2026-01-02T03:04:05Z",
	  "items":[{"kind":"service","id":"z","v":2.0,"e":1E2,"s":"caf\u00e9 \/"},
	           {"kind":"signer","id":"org:a#k","algo":"ed25519","pubkey":"` + pubB64(1) + `"},
	           {"n":1,"m":1,"id":"quorum","kind":"quorum"}]}`
	b := "\n" + `{ "items" : [ { "s" : "café /" , "e" : 100 , "v" : 2 , "id" : "z" , "kind" : "service" } ,
	  {"pubkey":"` + pubB64(1) + `","algo":"ed25519","id":"org:a#k","kind":"signer"},
	  {"kind":"quorum","id":"quorum","m":1.0,"n":10e-1}],
	  "created_at":"2026-01-02T03:04:05Z","prev_hash":"b3:` + strings.Repeat("ab", 32) + `","version":1.0 }` + "\t\n"
	sa, err := ParseSet([]byte(a), DefaultLimits(), testNow)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := ParseSet([]byte(b), DefaultLimits(), testNow)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sa.Canonical, sb.Canonical) || sa.B3 != sb.B3 {
		t.Fatalf("canonical forms differ:\n%s\n%s", sa.Canonical, sb.Canonical)
	}
	want := `{"created_at":"2026-01-02T03:04:05Z","items":[{"e":100,"id":"z","kind":"service","s":"café /","v":2},`
	if !strings.HasPrefix(string(sa.Canonical), want) {
		t.Fatalf("canonical %s", sa.Canonical)
	}
	if !reflect.DeepEqual(sa, sb) {
		t.Fatalf("typed views differ")
	}
}

// acceptCases are valid payloads at the edges of every rule.
var acceptCases = []struct {
	name string
	mut  func(p obj)
}{
	{"genesis", func(p obj) { p["version"] = 0; p["prev_hash"] = ZeroHash }},
	{"version 2^53-1", func(p obj) { p["version"] = MaxSafeInt }},
	{"created_at at now+skew", func(p obj) { p["created_at"] = "2026-01-02T03:09:05Z" }},
	{"created_at with offset", func(p obj) { p["created_at"] = "2026-01-02T05:09:04.999999999+02:00" }},
	{"created_at 40 bytes", func(p obj) { p["created_at"] = "2026-01-02T03:04:05.0000000000000000000Z" }},
	{"created_at long ago", func(p obj) { p["created_at"] = "1970-01-01T00:00:00Z" }},
	{"no note", func(p obj) { delete(p, "note") }},
	{"empty note", func(p obj) { p["note"] = "" }},
	{"note 1024", func(p obj) { p["note"] = strings.Repeat("é", 512) }},
	{"signer id longest", func(p obj) {
		item(p, 0)["id"] = "org:a" + strings.Repeat("b.-", 20) + "cd#" + strings.Repeat("K._-", 16)
	}},
	{"signer id shortest", func(p obj) { item(p, 0)["id"] = "org:a#b" }},
	{"item id 128", func(p obj) { item(p, 3)["id"] = "N" + strings.Repeat("a._:#/@-", 15) + "1234567" }},
	{"same id other kind", func(p obj) { item(p, 4)["id"] = "node-a"; item(p, 5)["id"] = "node-a" }},
	{"node minimal", func(p obj) { delete(item(p, 3), "urls"); delete(item(p, 3), "zone") }},
	{"node all roles", func(p obj) {
		item(p, 3)["roles"] = []any{"edge", "gateway", "registry", "index", "storage"}
		item(p, 3)["urls"] = obj{"edge": "https://e.example/x?y=1", "gateway": "HTTP://G:8090", "registry": "http://[::1]:9444"}
	}},
	{"zone empty", func(p obj) { item(p, 3)["zone"] = "" }},
	{"zone 64", func(p obj) { item(p, 3)["zone"] = strings.Repeat("z._-", 16) }},
	{"url 256", func(p obj) { item(p, 3)["urls"] = obj{"index": "http://h/" + strings.Repeat("p", 247)} }},
	{"tenant suspended and unlimited", func(p obj) { item(p, 4)["rps"] = 0; item(p, 4)["burst"] = 0 }},
	{"tenant weight 1", func(p obj) { item(p, 4)["weight"] = 1 }},
	{"tenant weight 1000", func(p obj) { item(p, 4)["weight"] = 1000; item(p, 4)["max_bytes_per_s"] = MaxSafeInt }},
	{"quorum m = n", func(p obj) { item(p, 2)["m"] = 2 }},
	{"32 signers 32 of 32", func(p obj) { manySigners(p, 32, 32) }},
	{"one signer", func(p obj) { manySigners(p, 1, 1) }},
	{"nesting 16", func(p obj) { item(p, 5)["deep"] = nested(13) }},
	{"brackets and numbers in strings", func(p obj) {
		item(p, 5)["s"] = strings.Repeat("[{", 20) + `\"1e400 -9007199254740993"` + "\\"
		item(p, 5)["[[[[[[[[[[[[[[[[[[9e99"] = nested(12)
	}},
	{"numbers at ±(2^53-1)", func(p obj) { item(p, 5)["n"] = []any{MaxSafeInt, -MaxSafeInt, 0.5, 1e-300} }},
	{"meta on every kind", func(p obj) {
		for i := range 6 {
			item(p, i)["meta"] = obj{"k": []any{nil, true, "v", obj{}}}
		}
	}},
	{"service free-form", func(p obj) { item(p, 5)["kind2"] = obj{"id": nil}; item(p, 5)["roles"] = 7 }},
}

func TestParseSetAccepts(t *testing.T) {
	for _, c := range acceptCases {
		t.Run(c.name, func(t *testing.T) {
			p := basePayload()
			c.mut(p)
			s, err := ParseSet(mustJSON(t, p), DefaultLimits(), testNow)
			if err != nil {
				t.Fatal(err)
			}
			again, err := ParseSet(s.Canonical, DefaultLimits(), testNow)
			if err != nil || !reflect.DeepEqual(s, again) {
				t.Fatalf("re-parse: %v", err)
			}
		})
	}
}

// sizedPayload returns basePayload whose canonical form is exactly n bytes.
func sizedPayload(t *testing.T, n int) []byte {
	p := basePayload()
	item(p, 5)["pad"] = ""
	s, err := ParseSet(mustJSON(t, p), DefaultLimits(), testNow)
	if err != nil {
		t.Fatal(err)
	}
	item(p, 5)["pad"] = strings.Repeat("p", n-len(s.Canonical))
	return mustJSON(t, p)
}

func TestParseSetSize(t *testing.T) {
	tooLarge := wantErr{http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge, ReasonMaxPayload, -1, ""}
	cases := []struct {
		name      string
		size      int
		limit     int
		effective int // the limit in force; 0 = accepted
	}{
		{"at configured limit", 1024, 1024, 0},
		{"one over configured limit", 1025, 1024, 1024},
		{"at ceiling", MaxPayloadCeiling, 0, 0},
		{"over ceiling, limit 0", MaxPayloadCeiling + 1, 0, MaxPayloadCeiling},
		{"over ceiling, limit negative", MaxPayloadCeiling + 1, -5, MaxPayloadCeiling},
		{"over ceiling, limit above ceiling", MaxPayloadCeiling + 1, 1 << 20, MaxPayloadCeiling},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseSet(sizedPayload(t, c.size), Limits{MaxPayloadBytes: c.limit}, testNow)
			if c.effective == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			checkErr(t, err, tooLarge)
			if d := err.(*httpx.Error).Details; d["size"] != c.size || d["limit"] != c.effective {
				t.Fatalf("details %v", d)
			}
		})
	}
	t.Run("malformed beats 413", func(t *testing.T) {
		raw := sizedPayload(t, 2000)
		raw = append(raw[:len(raw)-1], []byte(`,"x":1}`)...)
		_, err := ParseSet(raw, Limits{MaxPayloadBytes: 1024}, testNow)
		checkErr(t, err, mal(ReasonUnknownField, -1, "x"))
	})
	t.Run("413 beats bad_request", func(t *testing.T) {
		p := basePayload()
		item(p, 5)["pad"] = strings.Repeat("p", 2000)
		item(p, 4)["weight"] = 0
		_, err := ParseSet(mustJSON(t, p), Limits{MaxPayloadBytes: 1024}, testNow)
		checkErr(t, err, tooLarge)
	})
}

func TestParseCommitted(t *testing.T) {
	p := basePayload()
	p["created_at"] = "2999-01-01T00:00:00Z"
	item(p, 5)["pad"] = strings.Repeat("p", 2000)
	s, err := ParseSet(mustJSON(t, p), DefaultLimits(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseCommitted(s.Canonical)
	if err != nil || !reflect.DeepEqual(got, s) {
		t.Fatalf("ParseCommitted: %v", err)
	}
	var indented bytes.Buffer
	_ = json.Indent(&indented, s.Canonical, "", " ")
	_, err = ParseCommitted(indented.Bytes())
	checkErr(t, err, mal(ReasonSyntax, -1, ""))
	item(p, 4)["weight"] = 0
	_, err = ParseCommitted(mustJSON(t, p))
	checkErr(t, err, bad(ReasonInvalidValue, 4, "weight"))
}

func TestCheckChain(t *testing.T) {
	s, err := ParseSet(mustJSON(t, basePayload()), DefaultLimits(), testNow)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckChain(0, s.PrevHash); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		v  uint64
		b3 string
	}{{1, s.PrevHash}, {0, ZeroHash}, {2, s.B3}} {
		err := s.CheckChain(c.v, c.b3)
		checkErr(t, err, wantErr{http.StatusConflict, CodeChainMismatch, ReasonChain, -1, ""})
		d := err.(*httpx.Error).Details
		if d["head_version"] != c.v || d["head_payload_b3"] != c.b3 {
			t.Fatalf("details %v", d)
		}
	}
}
