package descriptor

import (
	"crypto/ed25519"
	"net/http"

	"github.com/ronhq/ron/httpx"
)

// SignerSet answers, for approvals of version v, whether a signer is in
// force, revoked or unknown and whether its signature holds. It is built
// from HEAD (version v−1): signer and quorum items of a commit take effect
// from the next version. Immutable and safe for concurrent use.
type SignerSet struct {
	version uint64
	byID    map[string]Signer
	ever    map[string]struct{}
	quorum  Quorum
}

// NewSignerSet builds the set that checks approvals of head.Version+1.
// everInForce lists every signer id ever in force in the log (HEAD's own
// may be included or not); a listed id absent from HEAD is revoked. head
// must be non-nil.
func NewSignerSet(head *Set, everInForce []string) *SignerSet {
	s := &SignerSet{
		version: head.Version,
		byID:    make(map[string]Signer, len(head.Signers)),
		ever:    make(map[string]struct{}, len(everInForce)+len(head.Signers)),
		quorum:  head.Quorum,
	}
	for _, sg := range head.Signers {
		s.byID[sg.ID] = sg
		s.ever[sg.ID] = struct{}{}
	}
	for _, id := range everInForce {
		s.ever[id] = struct{}{}
	}
	return s
}

// Quorum is HEAD's quorum: M of N approvals commit version HeadVersion+1.
func (s *SignerSet) Quorum() Quorum { return s.quorum }

// HeadVersion is the version of the set s was built from.
func (s *SignerSet) HeadVersion() uint64 { return s.version }

// Signer returns the in-force signer with id, if any.
func (s *SignerSet) Signer(id string) (Signer, bool) {
	sg, ok := s.byID[id]
	return sg, ok
}

// Verify checks a against payloadB3 in the docs/registry.md §2 order: algo ≠ "ed25519" → 422
// invalid_sig (unsupported_algo); signer not in HEAD → 422 invalid_sig
// (revoked_signer if it was ever in force, else unknown_signer); sig not
// base64 of 64 bytes → 400 malformed; a signature crypto/ed25519.Verify
// refuses over SigningMessage(payloadB3) → 422 invalid_sig (bad_signature).
//
// Acceptance is exactly crypto/ed25519.Verify's (cofactorless, RFC 8032
// with canonical S and R checks). Pinned by the C2SP/CCTV vectors
// (testdata/ed25519): Go refuses exactly the 706 of 914 vectors
// flagged non_canonical_R or low_order_residue and accepts the other 208,
// low-order R and low-order-component keys included. Signer keys pass
// ParsePubkey, which removes small-order A (526 vectors); among the 388
// vectors left, 86 verify, again exactly those with neither flag. The test
// asserts each count and each vector.
func (s *SignerSet) Verify(a Approval, payloadB3 string) error {
	if a.Algo != AlgoEd25519 {
		return invalidSig(ReasonUnsupported, "algo %q is not supported", clip(a.Algo))
	}
	sg, ok := s.byID[a.SignerID]
	if !ok {
		if _, was := s.ever[a.SignerID]; was {
			return invalidSig(ReasonRevoked, "signer %q is revoked at version %d", clip(a.SignerID), s.version)
		}
		return invalidSig(ReasonUnknownSigner, "signer %q is unknown", clip(a.SignerID))
	}
	sig, err := decodeSig(top("sig"), a.Sig)
	if err != nil {
		return err
	}
	if !verifySig(sg.Pubkey, SigningMessage(payloadB3), sig) {
		return invalidSig(ReasonBadSignature, "signature of %q does not verify", a.SignerID)
	}
	return nil
}

// verifySig is the one place ron decides an Ed25519 signature.
func verifySig(pub ed25519.PublicKey, msg, sig []byte) bool {
	return len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, msg, sig)
}

// VerifyQuorum checks a full approval list (a commit's, or a log entry's):
// every approval must Verify, no signer may appear twice (409
// duplicate_approval) and at least Quorum().M must be present (422
// quorum_failed, details have and need).
func (s *SignerSet) VerifyQuorum(approvals []Approval, payloadB3 string) error {
	seen := make(map[string]struct{}, len(approvals))
	for _, a := range approvals {
		if _, dup := seen[a.SignerID]; dup {
			return httpx.NewError(http.StatusConflict, CodeDuplicateApproval, "signer %q approves twice", clip(a.SignerID)).
				WithDetails(map[string]any{"reason": CodeDuplicateApproval, "signer_id": a.SignerID})
		}
		seen[a.SignerID] = struct{}{}
		if err := s.Verify(a, payloadB3); err != nil {
			return err
		}
	}
	if len(seen) < s.quorum.M {
		return httpx.NewError(http.StatusUnprocessableEntity, CodeQuorumFailed, "%d of %d approvals", len(seen), s.quorum.M).
			WithDetails(map[string]any{"reason": CodeQuorumFailed, "have": len(seen), "need": s.quorum.M})
	}
	return nil
}
