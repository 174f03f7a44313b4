package descriptor

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"

	"filippo.io/edwards25519"
)

// ParsePubkey decodes a signer pubkey: std padded base64 (strict, so each
// key has one spelling) of exactly 32 bytes that encode a point of
// edwards25519 in canonical form (y < p, no negative zero x) that is not of
// small order ([8]A ≠ identity). Failures are 400 bad_request
// (invalid_value). Every low-order encoding, canonical or not, is refused,
// which covers every CCTV vector flagged low_order_A or non_canonical_A;
// keys with a low-order component but a prime-order part
// (low_order_component_A only) are valid points and accepted.
func ParsePubkey(b64 string) (ed25519.PublicKey, error) {
	return parsePubkeyAt(top("pubkey"), b64)
}

func parsePubkeyAt(l loc, b64 string) (ed25519.PublicKey, error) {
	raw, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || len(b64) != pubkeyB64Len || len(raw) != ed25519.PublicKeySize {
		return nil, badRequest(l, ReasonInvalidValue, "pubkey is not std base64 of %d bytes", ed25519.PublicKeySize)
	}
	return pubkeyFromBytes(l, raw)
}

// pubkeyFromBytes applies the point checks to a 32-byte key.
func pubkeyFromBytes(l loc, raw []byte) (ed25519.PublicKey, error) {
	p, err := new(edwards25519.Point).SetBytes(raw)
	if err != nil {
		return nil, badRequest(l, ReasonInvalidValue, "pubkey is not a point of edwards25519")
	}
	if !bytes.Equal(p.Bytes(), raw) {
		return nil, badRequest(l, ReasonInvalidValue, "pubkey is a non-canonical point encoding")
	}
	if new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) == 1 {
		return nil, badRequest(l, ReasonInvalidValue, "pubkey is a point of small order")
	}
	return ed25519.PublicKey(bytes.Clone(raw)), nil
}
