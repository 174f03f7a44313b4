package descriptor

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ronhq/ron/httpx"
)

// signersSet returns a valid set at version whose signers are keys ks
// (ids org:example#k<key>) with quorum m of len(ks).
func signersSet(t testing.TB, version uint64, prev string, m int, ks ...byte) *Set {
	t.Helper()
	items := []any{}
	for _, k := range ks {
		items = append(items, obj{"kind": "signer", "id": fmt.Sprintf("org:example#k%d", k), "algo": "ed25519", "pubkey": pubB64(k)})
	}
	items = append(items, obj{"kind": "quorum", "id": "quorum", "m": m, "n": len(ks)})
	s, err := ParseSet(mustJSON(t, obj{"version": version, "prev_hash": prev, "created_at": "2026-01-01T00:00:00Z", "items": items}), DefaultLimits(), testNow)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func signAs(key byte, id string, b3 string) Approval {
	return Sign(testKey(key), id, b3, testNow)
}

func k(n byte) string { return fmt.Sprintf("org:example#k%d", n) }

func sigErr(reason string) wantErr {
	return wantErr{http.StatusUnprocessableEntity, CodeInvalidSig, reason, -1, ""}
}

func TestSignerSetVerify(t *testing.T) {
	head := signersSet(t, 4, someB3, 2, 1, 2, 3)
	ss := NewSignerSet(head, []string{k(9), k(1)})
	next := someB3[:len(someB3)-1] + "2"
	otherSig := signAs(1, k(1), someB3).Sig
	cases := []struct {
		name string
		a    Approval
		want *wantErr
	}{
		{"valid", signAs(1, k(1), next), nil},
		{"valid other signer", signAs(3, k(3), next), nil},
		{"algo empty", Approval{SignerID: k(1), Algo: "", Sig: signAs(1, k(1), next).Sig}, &wantErr{422, CodeInvalidSig, ReasonUnsupported, -1, ""}},
		{"algo case", Approval{SignerID: k(1), Algo: "Ed25519", Sig: signAs(1, k(1), next).Sig}, &wantErr{422, CodeInvalidSig, ReasonUnsupported, -1, ""}},
		{"algo beats unknown signer", Approval{SignerID: k(7), Algo: "rsa", Sig: "x"}, &wantErr{422, CodeInvalidSig, ReasonUnsupported, -1, ""}},
		{"unknown signer", signAs(7, k(7), next), &wantErr{422, CodeInvalidSig, ReasonUnknownSigner, -1, ""}},
		{"revoked signer, valid signature", signAs(9, k(9), next), &wantErr{422, CodeInvalidSig, ReasonRevoked, -1, ""}},
		{"unknown beats malformed sig", Approval{SignerID: k(7), Algo: AlgoEd25519, Sig: "x"}, &wantErr{422, CodeInvalidSig, ReasonUnknownSigner, -1, ""}},
		{"malformed sig", Approval{SignerID: k(1), Algo: AlgoEd25519, Sig: "x"}, &wantErr{400, httpx.CodeMalformed, ReasonBadSig, -1, "sig"}},
		{"signature over another payload", Approval{SignerID: k(1), Algo: AlgoEd25519, Sig: otherSig}, &wantErr{422, CodeInvalidSig, ReasonBadSignature, -1, ""}},
		{"another signer's key", Approval{SignerID: k(1), Algo: AlgoEd25519, Sig: signAs(2, k(2), next).Sig}, &wantErr{422, CodeInvalidSig, ReasonBadSignature, -1, ""}},
		{"signed_at is not signed", func() Approval { a := signAs(1, k(1), next); a.SignedAt = "1999-01-01T00:00:00Z"; return a }(), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ss.Verify(c.a, next)
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			checkErr(t, err, *c.want)
		})
	}
	if ss.Quorum() != (Quorum{M: 2, N: 3}) || ss.HeadVersion() != 4 {
		t.Fatalf("Quorum %+v HeadVersion %d", ss.Quorum(), ss.HeadVersion())
	}
	if sg, ok := ss.Signer(k(2)); !ok || sg.PubkeyB64 != pubB64(2) {
		t.Fatal("Signer(k2)")
	}
	if _, ok := ss.Signer(k(9)); ok {
		t.Fatal("revoked signer in force")
	}
}

// TestRotation: signer items committed at v take effect at v+1. v1 has
// k1,k2 (2 of 2); v2 rotates to k3,k4 (1 of 2). Approvals of v2 are
// checked by v1's set; approvals of v3 by v2's, where k1 is revoked.
func TestRotation(t *testing.T) {
	v1 := signersSet(t, 1, someB3, 2, 1, 2)
	v2 := signersSet(t, 2, v1.B3, 1, 3, 4)
	forV2 := NewSignerSet(v1, v1.SignerIDs())
	if err := forV2.VerifyQuorum([]Approval{signAs(1, k(1), v2.B3), signAs(2, k(2), v2.B3)}, v2.B3); err != nil {
		t.Fatalf("v2 approved by v1's signers: %v", err)
	}
	checkErr(t, forV2.Verify(signAs(3, k(3), v2.B3), v2.B3), sigErr(ReasonUnknownSigner))
	if forV2.Quorum().M != 2 {
		t.Fatal("v2 must need v1's quorum")
	}
	v3 := signersSet(t, 3, v2.B3, 1, 3, 4)
	forV3 := NewSignerSet(v2, append(v1.SignerIDs(), v2.SignerIDs()...))
	if err := forV3.VerifyQuorum([]Approval{signAs(3, k(3), v3.B3)}, v3.B3); err != nil {
		t.Fatalf("v3 approved by v2's signer: %v", err)
	}
	checkErr(t, forV3.Verify(signAs(1, k(1), v3.B3), v3.B3), sigErr(ReasonRevoked))
	checkErr(t, forV3.Verify(signAs(5, k(5), v3.B3), v3.B3), sigErr(ReasonUnknownSigner))
	// Without the history, a retired signer is merely unknown.
	checkErr(t, NewSignerSet(v2, nil).Verify(signAs(1, k(1), v3.B3), v3.B3), sigErr(ReasonUnknownSigner))
}

func TestVerifyQuorum(t *testing.T) {
	head := signersSet(t, 1, someB3, 2, 1, 2, 3)
	ss := NewSignerSet(head, nil)
	b3 := someB3[:len(someB3)-1] + "3"
	good := func(n byte) Approval { return signAs(n, k(n), b3) }
	cases := []struct {
		name      string
		approvals []Approval
		want      *wantErr
		have      int
	}{
		{"2 of 3", []Approval{good(1), good(3)}, nil, 0},
		{"3 of 3", []Approval{good(3), good(2), good(1)}, nil, 0},
		{"1 of 2 needed", []Approval{good(2)}, &wantErr{422, CodeQuorumFailed, CodeQuorumFailed, -1, ""}, 1},
		{"none", nil, &wantErr{422, CodeQuorumFailed, CodeQuorumFailed, -1, ""}, 0},
		{"duplicate signer", []Approval{good(1), good(1)}, &wantErr{409, CodeDuplicateApproval, CodeDuplicateApproval, -1, ""}, 0},
		{"one bad signature", []Approval{good(1), good(2), {SignerID: k(3), Algo: AlgoEd25519, Sig: signAs(3, k(3), someB3).Sig}}, &wantErr{422, CodeInvalidSig, ReasonBadSignature, -1, ""}, 0},
		{"unknown signer among", []Approval{good(1), good(2), signAs(8, k(8), b3)}, &wantErr{422, CodeInvalidSig, ReasonUnknownSigner, -1, ""}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ss.VerifyQuorum(c.approvals, b3)
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			checkErr(t, err, *c.want)
			if c.want.code == CodeQuorumFailed {
				if d := err.(*httpx.Error).Details; d["have"] != c.have || d["need"] != 2 {
					t.Fatalf("details %v", d)
				}
			}
		})
	}
}
