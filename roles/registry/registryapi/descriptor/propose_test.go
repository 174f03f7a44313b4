package descriptor

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/ronhq/ron/httpx"
)

func proposeJSON(t testing.TB, mut func(o obj)) []byte {
	o := obj{"schema_version": "1.0.0", "payload": basePayload()}
	if mut != nil {
		mut(o)
	}
	return mustJSON(t, o)
}

func TestDecodePropose(t *testing.T) {
	want, err := ParseSet(mustJSON(t, basePayload()), DefaultLimits(), testNow)
	if err != nil {
		t.Fatal(err)
	}
	for name, raw := range map[string][]byte{
		"without payload_b3": proposeJSON(t, nil),
		"with payload_b3":    proposeJSON(t, func(o obj) { o["payload_b3"] = want.B3 }),
		"minor and patch":    proposeJSON(t, func(o obj) { o["schema_version"] = "1.27.3" }),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := DecodePropose(raw, DefaultLimits(), testNow)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("DecodePropose: %v", err)
			}
		})
	}
	enc, err := EncodePropose(ProposeRequest{SchemaVersion: "1.0.0", Payload: want.Canonical, PayloadB3: want.B3})
	if err != nil || !IsCanonical(enc) {
		t.Fatalf("EncodePropose: %v", err)
	}
	if got, err := DecodePropose(enc, DefaultLimits(), testNow); err != nil || got.B3 != want.B3 {
		t.Fatalf("decode of EncodePropose: %v", err)
	}
	var r ProposeRequest
	if err := json.Unmarshal(enc, &r); err != nil || r.PayloadB3 != want.B3 {
		t.Fatalf("ProposeRequest tags: %v", err)
	}
}

func TestDecodeProposeBadInput(t *testing.T) {
	cases := []struct {
		name string
		raw  []byte
		lim  Limits
		want wantErr
	}{
		{"not JSON", []byte(`{"schema_version":"1.0.0",`), DefaultLimits(), mal(ReasonSyntax, -1, "")},
		{"duplicate key in payload", []byte(`{"schema_version":"1.0.0","payload":{"version":1,"version":1}}`), DefaultLimits(), mal(ReasonSyntax, -1, "")},
		{"lone surrogate", []byte(`{"schema_version":"1.0.0\udfff","payload":{}}`), DefaultLimits(), mal(ReasonSyntax, -1, "")},
		{"unknown member", proposeJSON(t, func(o obj) { o["version"] = 1 }), DefaultLimits(), mal(ReasonUnknownField, -1, "version")},
		{"missing payload", proposeJSON(t, func(o obj) { delete(o, "payload") }), DefaultLimits(), mal(ReasonMissingField, -1, "payload")},
		{"payload array", proposeJSON(t, func(o obj) { o["payload"] = []any{} }), DefaultLimits(), mal(ReasonWrongType, -1, "payload")},
		{"schema_version number", proposeJSON(t, func(o obj) { o["schema_version"] = 1 }), DefaultLimits(), mal(ReasonWrongType, -1, "schema_version")},
		{"payload_b3 null", proposeJSON(t, func(o obj) { o["payload_b3"] = nil }), DefaultLimits(), mal(ReasonWrongType, -1, "payload_b3")},
		{"payload unknown member", proposeJSON(t, func(o obj) { o["payload"].(obj)["x"] = 1 }), DefaultLimits(), mal(ReasonUnknownField, -1, "x")},
		{"schema major 2", proposeJSON(t, func(o obj) { o["schema_version"] = "2.0.0" }), DefaultLimits(), bad(ReasonSchema, -1, "schema_version")},
		{"schema major 0", proposeJSON(t, func(o obj) { o["schema_version"] = "0.9.0" }), DefaultLimits(), bad(ReasonSchema, -1, "schema_version")},
		{"schema leading zero", proposeJSON(t, func(o obj) { o["schema_version"] = "01.0.0" }), DefaultLimits(), bad(ReasonSchema, -1, "schema_version")},
		{"schema v prefix", proposeJSON(t, func(o obj) { o["schema_version"] = "v1.0.0" }), DefaultLimits(), bad(ReasonSchema, -1, "schema_version")},
		{"schema prerelease", proposeJSON(t, func(o obj) { o["schema_version"] = "1.0.0-rc1" }), DefaultLimits(), bad(ReasonSchema, -1, "schema_version")},
		{"schema beats payload rules", proposeJSON(t, func(o obj) { o["schema_version"] = "2.0.0"; o["payload"].(obj)["version"] = -1 }), DefaultLimits(), bad(ReasonSchema, -1, "schema_version")},
		{"payload too large", proposeJSON(t, func(o obj) { item(o["payload"].(obj), 5)["pad"] = strings.Repeat("p", 2000) }), Limits{MaxPayloadBytes: 1024},
			wantErr{http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge, ReasonMaxPayload, -1, ""}},
		{"payload item rule", proposeJSON(t, func(o obj) { item(o["payload"].(obj), 4)["weight"] = 0 }), DefaultLimits(), bad(ReasonInvalidValue, 4, "weight")},
		{"payload created_at future", proposeJSON(t, func(o obj) { o["payload"].(obj)["created_at"] = "2027-01-01T00:00:00Z" }), DefaultLimits(), bad(ReasonFutureTime, -1, "created_at")},
		{"payload_b3 mismatch", proposeJSON(t, func(o obj) { o["payload_b3"] = someB3 }), DefaultLimits(), bad(ReasonHashMismatch, -1, "payload_b3")},
		{"payload_b3 empty", proposeJSON(t, func(o obj) { o["payload_b3"] = "" }), DefaultLimits(), bad(ReasonHashMismatch, -1, "payload_b3")},
		{"item rule beats payload_b3", proposeJSON(t, func(o obj) { o["payload_b3"] = someB3; item(o["payload"].(obj), 0)["algo"] = "x" }), DefaultLimits(), bad(ReasonInvalidValue, 0, "algo")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodePropose(c.raw, c.lim, testNow)
			checkErr(t, err, c.want)
			if c.want.reason == ReasonHashMismatch {
				s, _ := ParseSet(mustJSON(t, basePayload()), DefaultLimits(), testNow)
				if got := err.(*httpx.Error).Details["computed"]; got != s.B3 {
					t.Fatalf("details.computed = %v, want %s", got, s.B3)
				}
			}
		})
	}
}

func TestProposalID(t *testing.T) {
	b3 := "b3:0123456789abcdef0123456789abcdef" + strings.Repeat("f", 32)
	id := ProposalID(b3)
	if id != "p_0123456789abcdef0123456789abcdef" || ParseProposalID(id) != nil {
		t.Fatalf("ProposalID = %s", id)
	}
	if ProposalID("b3:ab") != "p_ab" {
		t.Fatal("short b3")
	}
	for _, bad := range []string{"", "p_", "p_0123456789abcdef0123456789abcde", "p_0123456789abcdef0123456789abcdef0",
		"P_0123456789abcdef0123456789abcdef", "p_0123456789ABCDEF0123456789abcdef", "q_0123456789abcdef0123456789abcdef",
		"p_0123456789abcdef0123456789abcdeg", "p_0123456789abcdef0123456789abcdef\n", "../p_0123456789abcdef0123456789abcdef"} {
		err := ParseProposalID(bad)
		checkErr(t, err, wantErr{400, httpx.CodeBadRequest, ReasonProposalID, -1, ""})
	}
}

func TestSigningMessageAndHash(t *testing.T) {
	msg := SigningMessage(someB3)
	if SigningMessageLen != 87 || len(msg) != SigningMessageLen || string(msg) != "ron:svc-registry:v1\n"+someB3 {
		t.Fatalf("SigningMessage = %q", msg)
	}
	if got := PayloadB3(nil); got != "b3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262" {
		t.Fatalf("PayloadB3(empty) = %s", got)
	}
	for s, want := range map[string]bool{someB3: true, ZeroHash: true, "b3:" + strings.Repeat("A", 64): false,
		someB3 + "1": false, someB3[:66]: false, "b2:" + someB3[3:]: false} {
		if IsB3(s) != want {
			t.Errorf("IsB3(%q) = %v", s, !want)
		}
	}
	for s, want := range map[string]bool{`{"a":1}`: true, `{"a":1.0}`: false, `{ "a":1}`: false, `{"b":1,"a":2}`: false,
		`"\u0041"`: false, `"A"`: true, ``: false, `{"a":1}` + "\n": false} {
		if IsCanonical([]byte(s)) != want {
			t.Errorf("IsCanonical(%q) = %v", s, !want)
		}
	}
}
