package descriptor

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"time"

	"github.com/ronhq/ron/httpx"
)

// Signer is a signer item: an Ed25519 key allowed to approve the next
// version. PubkeyB64 is the key as written (std padded base64).
type Signer struct {
	ID        string
	Algo      string
	Pubkey    ed25519.PublicKey
	PubkeyB64 string
}

// Quorum is the quorum item: M approvals of N signers are needed.
type Quorum struct{ M, N int }

// Node is a node item. Roles keep their written order; URLs maps a role to
// its absolute http(s) URL (never nil); Zone "" means none.
type Node struct {
	ID    string
	Roles []string
	URLs  map[string]string
	Zone  string
}

// Tenant is a tenant item (meaning: gateway spec). RPS 0 suspends the
// tenant; MaxBytesPerS 0 means unlimited.
type Tenant struct {
	ID           string
	RPS          float64
	Burst        int
	Weight       int
	MaxBytesPerS int64
}

// Set is a validated DescriptorSet: its canonical JCS bytes, payload_b3 and
// the typed view of its items, each kind in item order. Services are the
// canonical bytes of each service item (meta included). A Set is immutable
// once returned; callers must not modify it.
type Set struct {
	Canonical []byte
	B3        string
	Version   uint64
	PrevHash  string
	CreatedAt string
	Note      string
	Signers   []Signer
	Quorum    Quorum
	Nodes     []Node
	Tenants   []Tenant
	Services  []json.RawMessage
}

// ParseSet validates a DescriptorSet payload (docs/registry.md §1) and returns it in
// canonical form with its payload_b3. The stages and their errors are those
// of the package doc: 400 malformed for syntax and shape (unknown member,
// missing member, wrong type); 413 payload_too_large when the canonical
// bytes exceed lim; 400 bad_request for every item rule, with
// details.item/field naming the first failure. created_at must be RFC 3339
// of at most 40 bytes and no later than now + lim.ClockSkew (a zero now
// skips that comparison). The items keep their order.
func ParseSet(raw []byte, lim Limits, now time.Time) (*Set, error) {
	canonical, err := Canonicalize(raw)
	if err != nil {
		return nil, err
	}
	d, err := decodeDraft(canonical)
	if err != nil {
		return nil, err
	}
	if len(canonical) > lim.maxPayload() {
		return nil, httpx.NewError(http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge,
			"canonical payload of %d bytes exceeds %d", len(canonical), lim.maxPayload()).
			WithDetails(map[string]any{"reason": ReasonMaxPayload, "size": len(canonical), "limit": lim.maxPayload()})
	}
	s := &Set{Canonical: canonical, B3: PayloadB3(canonical)}
	if err := s.applyTop(d.top, now, lim.skew()); err != nil {
		return nil, err
	}
	if err := s.applyItems(d); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseCommitted re-validates a payload taken from the log: canonical must
// be exactly canonical, every item rule applies, the size limit is the hard
// ceiling (max_payload_bytes may have been lowered since) and created_at is
// not compared with any clock. Non-canonical bytes are 400 malformed.
func ParseCommitted(canonical []byte) (*Set, error) {
	s, err := ParseSet(canonical, Limits{MaxPayloadBytes: MaxPayloadCeiling}, time.Time{})
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(s.Canonical, canonical) {
		return nil, malformed(top(""), ReasonSyntax, "payload is not in canonical form")
	}
	return s, nil
}

// SignerIDs returns the ids of s's signers in item order.
func (s *Set) SignerIDs() []string {
	ids := make([]string, len(s.Signers))
	for i, sg := range s.Signers {
		ids[i] = sg.ID
	}
	return ids
}

// CheckChain reports whether s extends a HEAD at headVersion whose
// payload_b3 is headB3: s.Version must be headVersion+1 and s.PrevHash
// headB3, else 409 chain_mismatch with details head_version and
// head_payload_b3.
func (s *Set) CheckChain(headVersion uint64, headB3 string) error {
	if s.Version == headVersion+1 && s.PrevHash == headB3 {
		return nil
	}
	return httpx.NewError(http.StatusConflict, CodeChainMismatch,
		"payload (version %d, prev_hash %s) does not extend HEAD %d (%s)", s.Version, s.PrevHash, headVersion, headB3).
		WithDetails(map[string]any{"reason": ReasonChain, "head_version": headVersion, "head_payload_b3": headB3})
}
