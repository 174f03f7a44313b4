package committer

// account counts and audits one answered message. Idempotent repeats are
// audited but not counted: the counters count state changes and
// rejections, not retries.
func (c *Committer) account(kind msgKind, r reply) {
	if r.audit.event != "" {
		c.emit(r.audit)
	}
	if r.repeat {
		return
	}
	switch kind {
	case kindPropose:
		c.mt.proposal(proposalResult(r.err)).Inc()
	case kindApprove:
		c.mt.approval(approvalResult(r.err)).Inc()
	case kindCommit:
		c.mt.commit(commitResult(r.err)).Inc()
	}
}

// rejectEarly accounts a rejection decided on the caller's goroutine,
// before the message reached the committer.
func (c *Committer) rejectEarly(kind msgKind, ev auditEvent, err error) error {
	r := reply{err: err}
	switch kind {
	case kindPropose:
		r = reject(ev, evProposeRejected, err)
	case kindApprove:
		r = reject(ev, evApproveRejected, err)
	case kindCommit:
		r = reject(ev, evCommitRejected, err)
	}
	c.account(kind, r)
	return err
}
