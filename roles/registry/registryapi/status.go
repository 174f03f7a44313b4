package registryapi

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
