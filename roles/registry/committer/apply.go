package committer

import (
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// apply runs one message against the working state (committer goroutine).
func (c *Committer) apply(b *batch, m *message, now time.Time, lim Limits) reply {
	switch m.kind {
	case kindPropose:
		return c.applyPropose(b, m, now, lim)
	case kindApprove:
		return c.applyApprove(b, m, now)
	default:
		return c.applyCommit(b, m, now)
	}
}

// applyPropose repeats the chain check and the open-proposal cap, and opens
// the proposal (or answers an open one's 202 again, unchanged).
func (c *Committer) applyPropose(b *batch, m *message, now time.Time, lim Limits) reply {
	st := c.st
	id := descriptor.ProposalID(m.set.B3)
	ev := auditEvent{event: evProposeAccepted, proposalID: id, b3: m.set.B3, corrID: m.corrID}.withVersion(m.set.Version)
	p := st.props[id]
	c.expireIfDue(b, p, now)
	if p != nil && p.isOpen() {
		return reply{proposed: proposedOf(p), repeat: true, audit: ev}
	}
	if err := m.set.CheckChain(st.head.Version, st.head.PayloadB3); err != nil {
		return reject(ev, evProposeRejected, err)
	}
	if len(st.open) >= lim.MaxOpenProposals {
		c.expireDue(b, now) // due ones do not count, swept or not
	}
	if len(st.open) >= lim.MaxOpenProposals {
		return reject(ev, evProposeRejected, errBusy("max_open_proposals reached"))
	}
	at := now.UTC().Truncate(time.Millisecond)
	p = &proposal{id: id, b3: m.set.B3, version: m.set.Version, set: m.set,
		proposedAt: at, expiresAt: at.Add(lim.ProposalTTL)}
	st.refreshStatus(p)
	st.insert(p)
	return reply{proposed: proposedOf(p), audit: ev}
}

// proposedOf is p's 202 body.
func proposedOf(p *proposal) registryapi.Proposed {
	return registryapi.Proposed{ProposalID: p.id, PayloadB3: p.b3, ExpiresAt: descriptor.FormatTime(p.expiresAt)}
}

// reject turns ev into a rejection event carrying err's code.
func reject(ev auditEvent, event string, err error) reply {
	ev.event, ev.code = event, codeOf(err)
	return reply{err: err, audit: ev}
}

// applyApprove re-checks state, base version and duplicates (and the
// signature when HEAD moved since the handler verified it), then records
// the approval.
func (c *Committer) applyApprove(b *batch, m *message, now time.Time) reply {
	st := c.st
	ev := auditEvent{event: evApproveAccepted, proposalID: m.id, signerID: m.approval.SignerID, corrID: m.corrID}
	p := st.props[m.id]
	c.expireIfDue(b, p, now)
	if err := c.approvable(p); err != nil {
		return reject(ev, evApproveRejected, err)
	}
	ev.b3 = p.b3
	ev = ev.withVersion(p.version)
	if m.verifiedAt != st.head.Version {
		if err := st.signers.Verify(m.approval, p.b3); err != nil {
			return reject(ev, evApproveRejected, err)
		}
	}
	if prev, ok := p.approval(m.approval.SignerID); ok {
		return reject(ev, evApproveRejected, errDuplicate(len(p.approvals), p.status, prev.Sig == m.approval.Sig))
	}
	p.addApproval(m.approval)
	st.refreshStatus(p)
	st.dirty[p.id] = true
	return reply{approval: c.approvalResult(p), audit: ev}
}

// approvable returns the error an approve of p gets from its state.
func (c *Committer) approvable(p *proposal) error {
	switch {
	case p == nil:
		return errNotFound()
	case p.status == StatusExpired:
		return errExpired()
	case p.status == StatusCommitted:
		return errCommittedConflict()
	case p.status == StatusStale, !c.st.extendsHead(p.version, p.set.PrevHash):
		return errChainMismatch(c.st.head)
	}
	return nil
}

// approvalResult is p's 200 body after an approval.
func (c *Committer) approvalResult(p *proposal) registryapi.ApprovalResult {
	return registryapi.ApprovalResult{Status: p.status, Approvals: len(p.approvals), Quorum: quorumOf(c.st.quorum())}
}
