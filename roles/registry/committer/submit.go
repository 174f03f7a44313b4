package committer

import (
	"context"
	"errors"
	"math"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/runtime"
)

// Propose opens a proposal for a decoded, validated set (the handler has
// run decode, canonicalisation, size and item rules). It checks write
// readiness, then version == HEAD+1 and prev_hash == HEAD's payload_b3
// (409 chain_mismatch {head_version, head_payload_b3}); an open proposal of
// the same payload returns its 202 body unchanged; otherwise the committer
// repeats the chain check and the open-proposal cap (429 busy). Errors are
// *httpx.Error: 429 busy (queue full), 503 not_ready/draining, 503 timeout
// (no reply within commit_timeout; propose is idempotent, retry).
func (c *Committer) Propose(ctx context.Context, s *descriptor.Set, corrID string) (registryapi.Proposed, error) {
	if s == nil {
		return registryapi.Proposed{}, errInternal("propose: nil set")
	}
	id := descriptor.ProposalID(s.B3)
	ev := auditEvent{proposalID: id, b3: s.B3, corrID: corrID}.withVersion(s.Version)
	if err := c.ready.admit(); err != nil {
		return registryapi.Proposed{}, c.rejectEarly(kindPropose, ev, err)
	}
	snap, lim := c.snap.Load(), c.limits()
	if err := snapChainCheck(snap, s); err != nil && c.settled() {
		return registryapi.Proposed{}, c.rejectEarly(kindPropose, ev, err)
	}
	if e := snap.props.get(id); e != nil && e.open && c.now().Before(e.expiresAt) {
		ev.event = evProposeAccepted
		c.emit(ev) // an idempotent repeat: audited, not counted
		return registryapi.Proposed{ProposalID: id, PayloadB3: s.B3, ExpiresAt: e.view.ExpiresAt}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, lim.CommitTimeout)
	defer cancel()
	r, err := c.submit(ctx, c.qProposals, endpointPropose, kindPropose, ev,
		&message{kind: kindPropose, set: s, corrID: corrID})
	return r.proposed, err
}

// Approve adds a decoded approval to proposal id. Checks, in order: write
// readiness, id form (400), existence (404; expired 410), state (committed
// → 409 conflict; stale or not extending HEAD → 409 chain_mismatch), then
// algo, signer in HEAD's set and signature (422 invalid_sig, under the CPU
// semaphore), then duplicate (409 duplicate_approval {approvals, status,
// same_sig}); the committer re-checks base version and duplicates.
func (c *Committer) Approve(ctx context.Context, id string, a descriptor.Approval, corrID string) (registryapi.ApprovalResult, error) {
	ev := auditEvent{proposalID: id, signerID: a.SignerID, corrID: corrID}
	if err := c.ready.admit(); err != nil {
		return registryapi.ApprovalResult{}, c.rejectEarly(kindApprove, ev, err)
	}
	if err := descriptor.ParseProposalID(id); err != nil {
		return registryapi.ApprovalResult{}, c.rejectEarly(kindApprove, ev, err)
	}
	lim := c.limits()
	ctx, cancel := context.WithTimeout(ctx, lim.CommitTimeout)
	defer cancel()
	snap := c.snap.Load()
	verifiedAt := uint64(math.MaxUint64) // not verified here: the committer verifies
	if c.settled() {
		e, err := c.approveCheck(ctx, snap, id, a, lim)
		if e != nil {
			ev.b3 = e.view.PayloadB3
			ev = ev.withVersion(e.view.Version)
		}
		if err != nil {
			return registryapi.ApprovalResult{}, c.rejectEarly(kindApprove, ev, err)
		}
		verifiedAt = snap.head.Version
	}
	r, err := c.submit(ctx, c.qApprovals, endpointApprove, kindApprove, ev,
		&message{kind: kindApprove, id: id, approval: a, verifiedAt: verifiedAt, corrID: corrID})
	return r.approval, err
}

// snapChainCheck is the propose chain check against snap (no HEAD yet: a
// replicated registry before its init entry, refused by readiness first).
func snapChainCheck(snap *snapshot, s *descriptor.Set) error {
	if snap.head == nil {
		return nil
	}
	return s.CheckChain(snap.head.Version, snap.head.PayloadB3)
}

// approveCheck runs the handler-side approve checks against snap.
func (c *Committer) approveCheck(ctx context.Context, snap *snapshot, id string, a descriptor.Approval, lim Limits) (*entry, error) {
	e, err := snap.lookup(id, c.now(), lim.TombstoneTTL)
	if err != nil {
		return nil, err
	}
	switch {
	case e.view.Status == StatusCommitted:
		return e, errCommittedConflict()
	case e.view.Status == StatusStale, e.view.Version != snap.head.Version+1, e.prevHash != snap.head.PayloadB3:
		return e, errChainMismatch(snap.head)
	}
	if err := c.verify(ctx, snap.signers, a, e.view.PayloadB3); err != nil {
		return e, err
	}
	for _, have := range e.view.Approvals {
		if have.SignerID == a.SignerID {
			return e, errDuplicate(len(e.view.Approvals), e.view.Status, have.Sig == a.Sig)
		}
	}
	return e, nil
}

// verify checks a under the CPU semaphore, waiting for a slot only while
// ctx lasts.
func (c *Committer) verify(ctx context.Context, set *descriptor.SignerSet, a descriptor.Approval, b3 string) error {
	select {
	case c.cpu <- struct{}{}:
	case <-ctx.Done():
		c.mt.ioTimeout.Inc()
		return errTimeout()
	}
	defer func() { <-c.cpu }()
	return set.Verify(a, b3)
}

// Commit commits proposal id. Checks: write readiness, id form (400),
// existence (404), expired (410), already committed (the same 201 body,
// even after a restart); the committer then runs the compare-and-set on
// HEAD (stale or HEAD ≠ {version−1, prev_hash} → 409 chain_mismatch),
// the quorum (422 quorum_failed {have, need}) and re-verifies every
// approval before it appends. The 201 goes out only after both fsyncs and
// the snapshot swap. 503 timeout means the commit may still land: retry.
func (c *Committer) Commit(ctx context.Context, id string, corrID string) (registryapi.Committed, error) {
	ev := auditEvent{proposalID: id, corrID: corrID}
	if err := c.ready.admit(); err != nil {
		return registryapi.Committed{}, c.rejectEarly(kindCommit, ev, err)
	}
	if err := descriptor.ParseProposalID(id); err != nil {
		return registryapi.Committed{}, c.rejectEarly(kindCommit, ev, err)
	}
	lim := c.limits()
	e, err := c.snap.Load().lookup(id, c.now(), lim.TombstoneTTL)
	if err != nil && c.settled() {
		return registryapi.Committed{}, c.rejectEarly(kindCommit, ev, err)
	}
	if err == nil && e.committed != nil {
		c.emit(auditEvent{event: evCommitAccepted, proposalID: id, b3: e.committed.PayloadB3, corrID: corrID}.
			withVersion(e.committed.Version))
		return *e.committed, nil
	}
	ctx, cancel := context.WithTimeout(ctx, lim.CommitTimeout)
	defer cancel()
	r, err := c.submit(ctx, c.qCommits, endpointCommit, kindCommit, ev,
		&message{kind: kindCommit, id: id, corrID: corrID})
	return r.committed, err
}

// submit enqueues m (reject policy) and waits for its reply until ctx
// ends. A full queue is 429 busy, a closed one 503 draining, no reply in
// time 503 timeout (the message may still be applied).
func (c *Committer) submit(ctx context.Context, q *runtime.Queue[*message], endpoint string,
	kind msgKind, ev auditEvent, m *message) (reply, error) {
	m.ctx, m.reply = ctx, make(chan reply, 1)
	if _, _, err := q.Offer(m); err != nil {
		if errors.Is(err, runtime.ErrBusy) {
			c.mt.busy(endpoint)
			return reply{}, c.rejectEarly(kind, ev, errBusy("registry queue full"))
		}
		return reply{}, c.rejectEarly(kind, ev, errDraining())
	}
	select {
	case c.bell <- struct{}{}:
	default:
	}
	select {
	case r := <-m.reply:
		return r, r.err
	case <-ctx.Done():
	}
	select {
	case r := <-m.reply:
		return r, r.err
	default:
		c.mt.ioTimeout.Inc()
		return reply{}, errTimeout()
	}
}
