package committer

import (
	"encoding/json"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
)

// Proposal statuses (docs/registry.md §1).
const (
	StatusPending   = "pending"
	StatusQuorumMet = "quorum_met"
	StatusCommitted = "committed"
	StatusStale     = "stale"
	StatusExpired   = "expired"
)

// Fixed bounds of docs/registry.md §1 and §4.
const (
	// MaxTombstones is the most closed proposals kept; the oldest go first.
	MaxTombstones = 10000
	// MaxLeafBytes is the largest artifact the committer appends (tlog-tiles'
	// entry limit); a larger one is refused with 500 internal.
	MaxLeafBytes = segment.MaxArtifact
	// SweepInterval is the period of the expiry and tombstone sweeps.
	SweepInterval = time.Minute
	// DefaultQueueCapacity is each queue's capacity when Options leaves it 0.
	DefaultQueueCapacity = 512
)

// Limits are the live (hot-reloadable) limits the committer reads per
// message or batch. Zero fields take the docs/registry.md §7 defaults.
type Limits struct {
	descriptor.Limits
	ProposalTTL      time.Duration // 72h; applies to new proposals only
	TombstoneTTL     time.Duration // 168h
	MaxOpenProposals int           // 1024
	CommitTimeout    time.Duration // 2s: how long a caller waits for the committer
	GroupCommitMax   int           // 256: messages drained after the first one of a batch
}

// DefaultLimits returns the docs/registry.md §7 defaults.
func DefaultLimits() Limits {
	return Limits{
		Limits:           descriptor.Limits{MaxPayloadBytes: descriptor.MaxPayloadCeiling, ClockSkew: 5 * time.Minute},
		ProposalTTL:      72 * time.Hour,
		TombstoneTTL:     168 * time.Hour,
		MaxOpenProposals: 1024,
		CommitTimeout:    2 * time.Second,
		GroupCommitMax:   256,
	}
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxPayloadBytes <= 0 {
		l.MaxPayloadBytes = d.MaxPayloadBytes
	}
	if l.ProposalTTL <= 0 {
		l.ProposalTTL = d.ProposalTTL
	}
	if l.TombstoneTTL <= 0 {
		l.TombstoneTTL = d.TombstoneTTL
	}
	if l.MaxOpenProposals <= 0 {
		l.MaxOpenProposals = d.MaxOpenProposals
	}
	if l.CommitTimeout <= 0 {
		l.CommitTimeout = d.CommitTimeout
	}
	if l.GroupCommitMax <= 0 {
		l.GroupCommitMax = d.GroupCommitMax
	}
	return l
}

func quorumOf(q descriptor.Quorum) registryapi.Quorum {
	return registryapi.Quorum{M: q.M, N: q.N}
}

// ProposalView is the 200 body of GET /registry/proposals/{id}. Views are
// shared immutable snapshots: callers must not modify the slices.
type ProposalView struct {
	ProposalID       string                `json:"proposal_id"`
	Version          uint64                `json:"-"`
	Status           string                `json:"status"`
	Payload          json.RawMessage       `json:"payload"`
	PayloadB3        string                `json:"payload_b3"`
	Approvals        []descriptor.Approval `json:"approvals"`
	Quorum           registryapi.Quorum    `json:"quorum"`
	ProposedAt       string                `json:"proposed_at"`
	ExpiresAt        string                `json:"expires_at"`
	CommittedVersion *uint64               `json:"committed_version,omitempty"`
}

// Head is one durable HEAD: the committed set, its artifact bytes (the
// body of GET /registry/{version}), and the pre-encoded GET /registry/head
// body and ETag. Heads are immutable once published.
type Head struct {
	Version     uint64
	PayloadB3   string
	CommittedAt string
	Set         *descriptor.Set
	Artifact    []byte
	Body        []byte // {"version":…,"payload_b3":"…","committed_at":"…"}
	ETag        string // "<version>-<first 16 hex of payload_b3>", quoted
}
