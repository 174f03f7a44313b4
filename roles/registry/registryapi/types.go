package registryapi

import (
	"encoding/json"

	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// Quorum is the JSON shape {m, n} of the responses.
type Quorum struct {
	M int `json:"m"`
	N int `json:"n"`
}

// Proposed is the 202 body of POST /registry/proposals.
type Proposed struct {
	ProposalID string `json:"proposal_id"`
	PayloadB3  string `json:"payload_b3"`
	ExpiresAt  string `json:"expires_at"`
}

// ApprovalResult is the 200 body of POST /registry/approvals/{id}.
type ApprovalResult struct {
	Status    string `json:"status"`
	Approvals int    `json:"approvals"`
	Quorum    Quorum `json:"quorum"`
}

// Committed is the 201 body of POST /registry/commit/{id}. CorrID and
// Artifact are set only on the committer's first, durable success (what
// its OnCommit receives); an idempotent retry carries the same JSON body
// without them, and Client results carry only its JSON members (CorrID
// and Artifact are empty).
type Committed struct {
	Version     uint64 `json:"version"`
	PayloadB3   string `json:"payload_b3"`
	CommittedAt string `json:"committed_at"`
	CorrID      string `json:"-"`
	Artifact    []byte `json:"-"`
}

// ProposalSummary is one item of GET /registry/proposals.
type ProposalSummary struct {
	ProposalID string `json:"proposal_id"`
	Version    uint64 `json:"version"`
	PayloadB3  string `json:"payload_b3"`
	Status     string `json:"status"`
	Approvals  int    `json:"approvals"`
	ExpiresAt  string `json:"expires_at"`
}

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
