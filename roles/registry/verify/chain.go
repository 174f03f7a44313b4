package verify

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// chain runs the per-version semantic checks over consecutive leaves,
// carrying what the next version is checked against. The first leaf it
// sees is the anchor: genesis (fully checked) or min_index after pruning
// (anchored by the Merkle root only: no prev_hash link, no signatures).
type chain struct {
	genesis  string // pinned version-0 payload_b3 ("" none)
	started  bool
	prevB3   string
	prevAt   string // previous committed_at
	signers  *descriptor.SignerSet
	lastLeaf []byte
	lastB3   string
}

// check verifies the leaf of version v and advances the chain.
func (c *chain) check(v uint64, leaf []byte) *Mismatch {
	a, m := parseLeaf(v, leaf)
	if m != nil {
		return m
	}
	set, m := checkPayload(v, a)
	if m != nil {
		return m
	}
	if m := c.checkLink(v, a, set); m != nil {
		return m
	}
	if m := c.checkApprovals(v, a); m != nil {
		return m
	}
	if m := checkCanonical(v, leaf, a); m != nil {
		return m
	}
	c.started, c.prevB3, c.prevAt = true, a.PayloadB3, a.CommittedAt
	c.signers = descriptor.NewSignerSet(set, nil)
	c.lastLeaf, c.lastB3 = leaf, a.PayloadB3
	return nil
}

// parseLeaf decodes the artifact. ParseArtifact's "chain" reason (the
// artifact's version or prev_hash differs from its payload's) is reported
// as the version or prev_hash check it is.
func parseLeaf(v uint64, leaf []byte) (descriptor.Artifact, *Mismatch) {
	a, err := descriptor.ParseArtifact(leaf)
	if err == nil {
		if a.Version != v {
			return a, atVersion(v, CheckVersion, "artifact has version %d at leaf index %d", a.Version, v)
		}
		return a, nil
	}
	if reason(err) != descriptor.ReasonChain {
		return a, atVersion(v, CheckCanonical, "artifact does not parse: %v", err)
	}
	var top struct {
		Version json.Number `json:"version"`
		Payload struct {
			Version json.Number `json:"version"`
		} `json:"payload"`
	}
	if json.Unmarshal(leaf, &top) == nil && top.Version != top.Payload.Version {
		return a, atVersion(v, CheckVersion, "artifact version %s ≠ payload version %s", top.Version, top.Payload.Version)
	}
	return a, atVersion(v, CheckPrevHash, "artifact prev_hash differs from its payload's: %v", err)
}

// checkPayload recomputes payload_b3 and re-validates the payload's item
// rules.
func checkPayload(v uint64, a descriptor.Artifact) (*descriptor.Set, *Mismatch) {
	if got := descriptor.PayloadB3(a.Payload); got != a.PayloadB3 {
		return nil, atVersion(v, CheckPayloadB3, "payload hashes to %s, artifact says %s", got, a.PayloadB3)
	}
	set, err := descriptor.ParseCommitted(a.Payload)
	if err != nil {
		return nil, atVersion(v, CheckRules, "payload breaks the item rules: %v", err)
	}
	return set, nil
}

// checkCanonical requires the leaf to be byte-equal to the artifact's
// canonical re-encoding (payload canonical, approvals sorted).
func checkCanonical(v uint64, leaf []byte, a descriptor.Artifact) *Mismatch {
	enc, err := descriptor.EncodeArtifact(a)
	if err != nil {
		return atVersion(v, CheckCanonical, "artifact does not re-encode: %v", err)
	}
	if !bytes.Equal(enc, leaf) {
		return atVersion(v, CheckCanonical, "leaf is not byte-equal to its canonical re-encoding")
	}
	return nil
}

// checkLink checks the hash chain and committed_at against the previous
// version, genesis's fixed values and the --genesis pin.
func (c *chain) checkLink(v uint64, a descriptor.Artifact, set *descriptor.Set) *Mismatch {
	if v == 0 {
		if a.PrevHash != descriptor.ZeroHash {
			return atVersion(v, CheckPrevHash, "genesis prev_hash %s is not the zero hash", a.PrevHash)
		}
		if a.CommittedAt != set.CreatedAt {
			return atVersion(v, CheckCommittedAt, "genesis committed_at %s ≠ created_at %s", a.CommittedAt, set.CreatedAt)
		}
		if c.genesis != "" && a.PayloadB3 != c.genesis {
			return atVersion(v, CheckGenesis, "payload_b3 %s ≠ pinned %s", a.PayloadB3, c.genesis)
		}
		return nil
	}
	if !c.started {
		return nil
	}
	if a.PrevHash != c.prevB3 {
		return atVersion(v, CheckPrevHash, "prev_hash %s ≠ payload_b3 %s of version %d", a.PrevHash, c.prevB3, v-1)
	}
	if a.CommittedAt < c.prevAt {
		return atVersion(v, CheckCommittedAt, "committed_at %s before %s of version %d", a.CommittedAt, c.prevAt, v-1)
	}
	return nil
}

// checkApprovals requires m valid distinct signers of the previous
// version's set; genesis carries none, and the pruned anchor is skipped.
func (c *chain) checkApprovals(v uint64, a descriptor.Artifact) *Mismatch {
	if v == 0 {
		if len(a.Approvals) != 0 {
			return atVersion(v, CheckSignature, "genesis carries %d approvals", len(a.Approvals))
		}
		return nil
	}
	if !c.started {
		return nil
	}
	err := c.signers.VerifyQuorum(a.Approvals, a.PayloadB3)
	if err == nil {
		return nil
	}
	switch code(err) {
	case descriptor.CodeQuorumFailed, descriptor.CodeDuplicateApproval:
		return atVersion(v, CheckQuorum, "%v", err)
	}
	return atVersion(v, CheckSignature, "%v", err)
}

// code returns the envelope code of a descriptor error.
func code(err error) string {
	var he *httpx.Error
	if errors.As(err, &he) {
		return he.Code
	}
	return ""
}

// reason returns details.reason of a descriptor error.
func reason(err error) string {
	var he *httpx.Error
	if errors.As(err, &he) {
		r, _ := he.Details["reason"].(string)
		return r
	}
	return ""
}
