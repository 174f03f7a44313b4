package committer

import "strings"

// Audit event names (docs/registry.md §6).
const (
	evProposeAccepted = "propose.accepted"
	evProposeRejected = "propose.rejected"
	evApproveAccepted = "approve.accepted"
	evApproveRejected = "approve.rejected"
	evCommitAccepted  = "commit.accepted"
	evCommitRejected  = "commit.rejected"
	evExpired         = "proposal.expired"
	evStale           = "proposal.stale"
	evRollForward     = "recovery.roll_forward"
)

// auditEvent is one audit line: an info log with the docs/registry.md §6 fields and a count
// in ron_registry_audit_events_total{event}. Never a full address: b3 is
// logged as its first 8 hex only.
type auditEvent struct {
	event      string
	code       string
	proposalID string
	version    uint64
	hasVersion bool
	signerID   string
	b3         string
	corrID     string
}

// withVersion returns e carrying version v.
func (e auditEvent) withVersion(v uint64) auditEvent {
	e.version, e.hasVersion = v, true
	return e
}

// emit logs and counts e.
func (c *Committer) emit(e auditEvent) {
	c.mt.audit(e.event)
	ev := c.logger.Info().Str("event", e.event)
	if e.code != "" {
		ev = ev.Str("code", e.code)
	}
	if e.proposalID != "" {
		ev = ev.Str("proposal_id", e.proposalID)
	}
	if e.hasVersion {
		ev = ev.Uint64("version", e.version)
	}
	if e.signerID != "" {
		ev = ev.Str("signer_id", e.signerID)
	}
	if e.b3 != "" {
		ev = ev.Str("b3_prefix", b3Prefix(e.b3))
	}
	if e.corrID != "" {
		ev = ev.Str("corr_id", e.corrID)
	}
	ev.Msg("audit")
}

// b3Prefix returns the first 8 hex of a "b3:<hex>" address.
func b3Prefix(b3 string) string {
	h := strings.TrimPrefix(b3, "b3:")
	if len(h) > 8 {
		h = h[:8]
	}
	return h
}
