package committer

import (
	"slices"
	"strings"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// expireIfDue closes an open p whose expires_at has passed (its tombstone
// age starts at expires_at) and records the event in b.
func (c *Committer) expireIfDue(b *batch, p *proposal, now time.Time) {
	if p == nil || !p.isOpen() || now.Before(p.expiresAt) {
		return
	}
	c.st.closeAs(p, StatusExpired, p.expiresAt)
	ev := auditEvent{event: evExpired, proposalID: p.id, b3: p.b3}.withVersion(p.version)
	b.later(func() {
		c.mt.proposal(resExpired).Inc()
		c.emit(ev)
	})
}

// markStale closes every open proposal that no longer extends HEAD (one
// already past expires_at is closed as expired instead).
func (c *Committer) markStale(b *batch, now time.Time) {
	st := c.st
	var stale []*proposal
	for _, p := range sortedByID(st.open) {
		if c.expireIfDue(b, p, now); p.isOpen() && !st.extendsHead(p.version, p.set.PrevHash) {
			stale = append(stale, p)
		}
	}
	for _, p := range stale {
		st.closeAs(p, StatusStale, now)
		ev := auditEvent{event: evStale, code: descriptor.CodeChainMismatch, proposalID: p.id, b3: p.b3}.withVersion(p.version)
		b.later(func() {
			c.mt.proposal(resStale).Inc()
			c.emit(ev)
		})
	}
}

// sweepState expires due open proposals, deletes tombstones older than
// the tombstone TTL and enforces MaxTombstones.
func (c *Committer) sweepState(b *batch, now time.Time, lim Limits) {
	st := c.st
	c.expireDue(b, now)
	var old []*proposal
	for _, p := range st.props {
		if !p.isOpen() && !now.Before(p.closedAt.Add(lim.TombstoneTTL)) {
			old = append(old, p)
		}
	}
	for _, p := range old {
		st.remove(p)
	}
	st.evictOverCap()
}

// expireDue expires every open proposal past its expires_at.
func (c *Committer) expireDue(b *batch, now time.Time) {
	for _, p := range sortedByID(c.st.open) {
		c.expireIfDue(b, p, now)
	}
}

// sortedByID returns m's proposals in id order (deterministic events).
func sortedByID(m map[string]*proposal) []*proposal {
	out := make([]*proposal, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *proposal) int { return strings.Compare(a.id, b.id) })
	return out
}

// sweep runs one sweep as a batch without messages: its changes are made
// durable and published like any batch.
func (c *Committer) sweep() {
	if c.ready.storage.Load() {
		return
	}
	b := &batch{}
	c.poisoned.Store(true)
	c.sweepState(b, c.now(), c.limits())
	c.finish(b)
}
