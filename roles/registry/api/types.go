package api

import (
	"encoding/json"

	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/descriptor"
)

// Response bodies shared with the committer (docs/registry.md §2).
type (
	// Proposed is the 202 body of POST /registry/proposals.
	Proposed = committer.Proposed
	// ApprovalResult is the 200 body of POST /registry/approvals/{id}.
	ApprovalResult = committer.ApprovalResult
	// Committed is the 201 body of POST /registry/commit/{id}; Client
	// results carry only its JSON members (CorrID and Artifact are empty).
	Committed = committer.Committed
	// ProposalSummary is one item of GET /registry/proposals.
	ProposalSummary = committer.ProposalSummary
	// Quorum is the {m, n} object of the responses.
	Quorum = committer.Quorum
)

// Head is the body of GET /registry/head: the committed HEAD.
type Head struct {
	Version     uint64 `json:"version"`
	PayloadB3   string `json:"payload_b3"`
	CommittedAt string `json:"committed_at"`
}

// Proposal is the body of GET /registry/proposals/{id}. CommittedVersion is
// set only for a committed proposal.
type Proposal struct {
	ProposalID       string                `json:"proposal_id"`
	Status           string                `json:"status"`
	Payload          json.RawMessage       `json:"payload"`
	PayloadB3        string                `json:"payload_b3"`
	Approvals        []descriptor.Approval `json:"approvals"`
	Quorum           Quorum                `json:"quorum"`
	ProposedAt       string                `json:"proposed_at"`
	ExpiresAt        string                `json:"expires_at"`
	CommittedVersion *uint64               `json:"committed_version,omitempty"`
}

// proposalOf converts the committer's view (same JSON members).
func proposalOf(v committer.ProposalView) Proposal {
	return Proposal{ProposalID: v.ProposalID, Status: v.Status, Payload: v.Payload, PayloadB3: v.PayloadB3,
		Approvals: v.Approvals, Quorum: v.Quorum, ProposedAt: v.ProposedAt, ExpiresAt: v.ExpiresAt,
		CommittedVersion: v.CommittedVersion}
}

// ProposalList is the body of GET /registry/proposals: the open proposals,
// oldest first.
type ProposalList struct {
	Proposals []ProposalSummary `json:"proposals"`
}

// Update is one registry.update event of GET /registry/stream (its data
// member) and one value of Client.Watch. CorrID is the X-Corr-ID of the
// commit request, stored with the log record.
type Update struct {
	Version     uint64 `json:"version"`
	PayloadB3   string `json:"payload_b3"`
	CommittedAt string `json:"committed_at"`
	CorrID      string `json:"corr_id"`
}

// Status is the body of GET /registry/status (docs/registry.md §2), built by
// the role. Signers are HEAD's signer ids in item order.
type Status struct {
	Head                Head             `json:"head"`
	ReadReady           bool             `json:"read_ready"`
	WriteReady          bool             `json:"write_ready"`
	WriteUnreadyReasons []string         `json:"write_unready_reasons"`
	ReadOnly            bool             `json:"read_only"`
	DevSigner           bool             `json:"dev_signer"`
	Amnesia             bool             `json:"amnesia"`
	Quorum              Quorum           `json:"quorum"`
	Signers             []string         `json:"signers"`
	Checkpoint          CheckpointStatus `json:"checkpoint"`
	MinIndex            uint64           `json:"min_index"`
	OpenProposals       int              `json:"open_proposals"`
	Verifier            VerifierStatus   `json:"verifier"`
}

// CheckpointStatus is Status.checkpoint: the published checkpoint's size
// (leaves) and its age in whole seconds.
type CheckpointStatus struct {
	Size uint64 `json:"size"`
	AgeS int64  `json:"age_s"`
}

// VerifierStatus is Status.verifier. VerifiedThrough is the highest version
// the deep verifier has checked (null before its first check);
// PassStartedAt is the RFC 3339 start of the current or last full pass (""
// before the first); LastFailure is null unless a check failed.
type VerifierStatus struct {
	VerifiedThrough *uint64        `json:"verified_through"`
	PassStartedAt   string         `json:"pass_started_at"`
	LastFailure     *VerifyFailure `json:"last_failure"`
}

// VerifyFailure names the version and check (a
// ron_audit_chain_verify_failures_total label) of a failed deep-verifier
// check, when it happened (RFC 3339) and why.
type VerifyFailure struct {
	Version uint64 `json:"version"`
	Check   string `json:"check"`
	At      string `json:"at"`
	Message string `json:"message"`
}
