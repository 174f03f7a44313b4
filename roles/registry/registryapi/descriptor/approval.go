package descriptor

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/gowebpki/jcs"
)

// AlgoEd25519 is the only signature algorithm.
const AlgoEd25519 = "ed25519"

// sigB64Len and pubkeyB64Len are the std padded base64 lengths of an
// Ed25519 signature and public key.
const (
	sigB64Len    = 88
	pubkeyB64Len = 44
)

// Approval is one signer's approval of a payload. Sig is std padded base64
// (88 characters) of the Ed25519 signature over SigningMessage(payload_b3).
// SignedAt is the signer's RFC 3339 claim; the signature does not cover it.
type Approval struct {
	SignerID string `json:"signer_id"`
	Algo     string `json:"algo"`
	Sig      string `json:"sig"`
	SignedAt string `json:"signed_at"`
}

var approvalShape = shape{fields: map[string]field{
	"signer_id": {tString, true},
	"algo":      {tString, true},
	"sig":       {tString, true},
	"signed_at": {tString, true},
}}

// DecodeApproval decodes an approval body strictly: syntax, unknown or
// missing members and wrong types are 400 malformed, and so is a sig that
// is not std padded base64 (strict) of exactly 64 bytes (reason
// sig_encoding); a signer_id that is not a signer id, or a signed_at that is
// not RFC 3339 of ≤ 40 bytes or lies past now + lim.ClockSkew, is 400
// bad_request. algo is not judged here (SignerSet.Verify answers 422).
func DecodeApproval(raw []byte, lim Limits, now time.Time) (Approval, error) {
	canonical, err := Canonicalize(raw)
	if err != nil {
		return Approval{}, err
	}
	a, err := approvalFrom(top(""), canonical)
	if err != nil {
		return Approval{}, err
	}
	if err := a.checkRules(top(""), now, lim.skew()); err != nil {
		return Approval{}, err
	}
	return a, nil
}

// approvalFrom runs the malformed stage over one canonical approval object.
func approvalFrom(l loc, canonical json.RawMessage) (Approval, error) {
	f, err := decodeObject(l, canonical)
	if err != nil {
		return Approval{}, err
	}
	if err := approvalShape.check(l, f); err != nil {
		return Approval{}, err
	}
	a := Approval{SignerID: f.str("signer_id"), Algo: f.str("algo"), Sig: f.str("sig"), SignedAt: f.str("signed_at")}
	if _, err := decodeSig(l.in("sig"), a.Sig); err != nil {
		return Approval{}, err
	}
	return a, nil
}

// checkRules applies the bad_request rules; a zero now skips the future check.
func (a Approval) checkRules(l loc, now time.Time, skew time.Duration) error {
	if !IsSignerID(a.SignerID) {
		return badRequest(l.in("signer_id"), ReasonInvalidID, "signer id %q does not match %s", clip(a.SignerID), signerIDRe)
	}
	return checkTime(l.in("signed_at"), a.SignedAt, now, skew)
}

// decodeSig decodes a sig: strict std padded base64 of exactly 64 bytes,
// else 400 malformed (sig_encoding).
func decodeSig(l loc, s string) ([]byte, error) {
	// The length check also refuses \r and \n, which the decoder skips.
	sig, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(s) != sigB64Len || len(sig) != ed25519.SignatureSize {
		return nil, malformed(l, ReasonBadSig, "sig is not std padded base64 of %d bytes", ed25519.SignatureSize)
	}
	return sig, nil
}

// EncodeApproval returns the canonical JCS bytes of a.
func EncodeApproval(a Approval) ([]byte, error) {
	raw, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(raw)
}

// Sign returns signerID's approval of payloadB3 made with priv, signed_at
// being FormatTime(now). Ed25519 is deterministic: the same inputs give the
// same approval.
func Sign(priv ed25519.PrivateKey, signerID, payloadB3 string, now time.Time) Approval {
	sig := ed25519.Sign(priv, SigningMessage(payloadB3))
	return Approval{
		SignerID: signerID,
		Algo:     AlgoEd25519,
		Sig:      base64.StdEncoding.EncodeToString(sig),
		SignedAt: FormatTime(now),
	}
}
