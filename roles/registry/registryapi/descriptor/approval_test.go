package descriptor

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx"
)

const someB3 = "b3:1111111111111111111111111111111111111111111111111111111111111111"

func approvalJSON(t testing.TB, mut func(o obj)) []byte {
	a := Sign(testKey(1), "org:example#k1", someB3, testNow)
	o := obj{"signer_id": a.SignerID, "algo": a.Algo, "sig": a.Sig, "signed_at": a.SignedAt}
	if mut != nil {
		mut(o)
	}
	return mustJSON(t, o)
}

func TestSignAndDecodeApproval(t *testing.T) {
	a := Sign(testKey(1), "org:example#k1", someB3, testNow)
	if a.Algo != AlgoEd25519 || a.SignedAt != "2026-01-02T03:04:05.000Z" || len(a.Sig) != 88 {
		t.Fatalf("Sign: %+v", a)
	}
	enc, err := EncodeApproval(a)
	if err != nil || !IsCanonical(enc) {
		t.Fatalf("EncodeApproval: %s %v", enc, err)
	}
	got, err := DecodeApproval(enc, DefaultLimits(), testNow)
	if err != nil || got != a {
		t.Fatalf("DecodeApproval: %+v %v", got, err)
	}
	if b := Sign(testKey(1), "org:example#k1", someB3, testNow); b != a {
		t.Fatal("Sign is not deterministic")
	}
}

func TestDecodeApprovalBadInput(t *testing.T) {
	sig63 := base64.StdEncoding.EncodeToString(make([]byte, 63))
	sig65 := base64.StdEncoding.EncodeToString(make([]byte, 65))
	sig64 := base64.StdEncoding.EncodeToString(make([]byte, 64))
	cases := []struct {
		name string
		raw  []byte
		want wantErr
	}{
		{"not JSON", []byte("{"), mal(ReasonSyntax, -1, "")},
		{"array", []byte("[]"), mal(ReasonWrongType, -1, "")},
		{"duplicate key", []byte(`{"algo":"ed25519","algo":"ed25519"}`), mal(ReasonSyntax, -1, "")},
		{"unknown member", approvalJSON(t, func(o obj) { o["version"] = 1 }), mal(ReasonUnknownField, -1, "version")},
		{"missing signed_at", approvalJSON(t, func(o obj) { delete(o, "signed_at") }), mal(ReasonMissingField, -1, "signed_at")},
		{"missing sig", approvalJSON(t, func(o obj) { delete(o, "sig") }), mal(ReasonMissingField, -1, "sig")},
		{"signer_id null", approvalJSON(t, func(o obj) { o["signer_id"] = nil }), mal(ReasonWrongType, -1, "signer_id")},
		{"sig number", approvalJSON(t, func(o obj) { o["sig"] = 1 }), mal(ReasonWrongType, -1, "sig")},
		{"sig not base64", approvalJSON(t, func(o obj) { o["sig"] = "!!" }), mal(ReasonBadSig, -1, "sig")},
		{"sig 63 bytes", approvalJSON(t, func(o obj) { o["sig"] = sig63 }), mal(ReasonBadSig, -1, "sig")},
		{"sig 65 bytes", approvalJSON(t, func(o obj) { o["sig"] = sig65 }), mal(ReasonBadSig, -1, "sig")},
		{"sig unpadded", approvalJSON(t, func(o obj) { o["sig"] = strings.TrimRight(sig64, "=") }), mal(ReasonBadSig, -1, "sig")},
		{"sig url alphabet", approvalJSON(t, func(o obj) { o["sig"] = base64.URLEncoding.EncodeToString(append(make([]byte, 62), 0xfb, 0xff)) }), mal(ReasonBadSig, -1, "sig")},
		{"sig with newline", approvalJSON(t, func(o obj) { o["sig"] = sig64[:40] + "\n" + sig64[40:] }), mal(ReasonBadSig, -1, "sig")},
		{"malformed sig beats bad signer", approvalJSON(t, func(o obj) { o["sig"] = "x"; o["signer_id"] = "bob" }), mal(ReasonBadSig, -1, "sig")},
		{"signer_id not a signer id", approvalJSON(t, func(o obj) { o["signer_id"] = "bob" }), bad(ReasonInvalidID, -1, "signer_id")},
		{"signed_at not RFC 3339", approvalJSON(t, func(o obj) { o["signed_at"] = "yesterday" }), bad(ReasonInvalidTime, -1, "signed_at")},
		{"signed_at 41 bytes", approvalJSON(t, func(o obj) { o["signed_at"] = "2026-01-02T03:04:05.00000000000000000000Z" }), bad(ReasonInvalidTime, -1, "signed_at")},
		{"signed_at in the future", approvalJSON(t, func(o obj) { o["signed_at"] = "2026-01-02T03:09:06Z" }), bad(ReasonFutureTime, -1, "signed_at")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeApproval(c.raw, DefaultLimits(), testNow)
			checkErr(t, err, c.want)
		})
	}
}

func TestDecodeApprovalAccepts(t *testing.T) {
	for name, mut := range map[string]func(o obj){
		"signed_at at now+skew":   func(o obj) { o["signed_at"] = "2026-01-02T03:09:05Z" },
		"signed_at with offset":   func(o obj) { o["signed_at"] = "2026-01-01T00:00:00-07:00" },
		"algo judged by Verify":   func(o obj) { o["algo"] = "rsa" },
		"any well-formed 64 byte": func(o obj) { o["sig"] = base64.StdEncoding.EncodeToString(make([]byte, 64)) },
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodeApproval(approvalJSON(t, mut), DefaultLimits(), testNow); err != nil {
				t.Fatal(err)
			}
		})
	}
	lim := Limits{ClockSkew: time.Hour}
	if _, err := DecodeApproval(approvalJSON(t, func(o obj) { o["signed_at"] = "2026-01-02T04:04:05Z" }), lim, testNow); err != nil {
		t.Fatalf("skew 1h: %v", err)
	}
	lim.ClockSkew = -time.Hour // negative means 0
	_, err := DecodeApproval(approvalJSON(t, func(o obj) { o["signed_at"] = "2026-01-02T03:04:05.001Z" }), lim, testNow)
	checkErr(t, err, wantErr{http.StatusBadRequest, httpx.CodeBadRequest, ReasonFutureTime, -1, "signed_at"})
}
