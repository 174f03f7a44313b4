package committer

import (
	"encoding/json"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// entry is the immutable read view of one proposal.
type entry struct {
	view      ProposalView
	summary   registryapi.ProposalSummary
	prevHash  string
	open      bool
	expired   bool
	proposed  time.Time
	expiresAt time.Time
	closedAt  time.Time
	committed *registryapi.Committed // committed: the idempotent 201 body
}

// snapshot is everything readers see; published whole after each durable
// batch and never modified afterwards.
type snapshot struct {
	head    *Head
	signers *descriptor.SignerSet
	props   propView
	open    []*entry // oldest first
}

// propShards is how many maps the proposals' read view is split into: a
// batch copies only the maps its changed ids fall in, not every proposal
// and tombstone (up to 10,000) each time.
const propShards = 64

// propView is the proposals' read view by id, split into shards. A
// published view is never modified; nextSnapshot copies a shard before it
// changes it.
type propView [propShards]map[string]*entry

// shardOf is the shard of id.
func shardOf(id string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % propShards)
}

// get returns id's entry or nil.
func (v *propView) get(id string) *entry { return v[shardOf(id)][id] }

// entryOf builds p's read view; q is the quorum shown for an open proposal
// (HEAD's: the one its approvals need).
func entryOf(p *proposal, q descriptor.Quorum) *entry {
	if !p.isOpen() {
		q = p.quorum
	}
	e := &entry{
		open: p.isOpen(), expired: p.status == StatusExpired,
		proposed: p.proposedAt, expiresAt: p.expiresAt, closedAt: p.closedAt,
		view: ProposalView{
			ProposalID: p.id, Version: p.version, Status: p.status, PayloadB3: p.b3,
			Approvals: p.approvals, Quorum: quorumOf(q),
			ProposedAt: descriptor.FormatTime(p.proposedAt), ExpiresAt: descriptor.FormatTime(p.expiresAt),
		},
	}
	if e.view.Approvals == nil {
		e.view.Approvals = []descriptor.Approval{}
	}
	if p.set != nil {
		e.view.Payload, e.prevHash = json.RawMessage(p.set.Canonical), p.set.PrevHash
	}
	e.summary = registryapi.ProposalSummary{ProposalID: p.id, Version: p.version, PayloadB3: p.b3, Status: p.status,
		Approvals: len(p.approvals), ExpiresAt: e.view.ExpiresAt}
	if p.status == StatusCommitted {
		v := p.commitVer
		e.view.CommittedVersion = &v
		e.committed = &registryapi.Committed{Version: p.commitVer, PayloadB3: p.b3, CommittedAt: p.commitAt}
	}
	return e
}

// fullSnapshot builds a snapshot of every proposal in st.
func fullSnapshot(st *state) *snapshot {
	s := &snapshot{head: st.head, signers: st.signers}
	for k := range s.props {
		s.props[k] = map[string]*entry{}
	}
	for id, p := range st.props {
		s.props[shardOf(id)][id] = entryOf(p, st.quorum())
	}
	s.open = openList(&s.props, st)
	return s
}

// nextSnapshot derives a snapshot from prev, rebuilding the entries of ids.
func nextSnapshot(prev *snapshot, st *state, ids []string) *snapshot {
	s := &snapshot{head: st.head, signers: st.signers, props: prev.props}
	var copied [propShards]bool
	for _, id := range ids {
		k := shardOf(id)
		if !copied[k] {
			s.props[k], copied[k] = maps.Clone(prev.props[k]), true
		}
		if p := st.props[id]; p != nil {
			s.props[k][id] = entryOf(p, st.quorum())
		} else {
			delete(s.props[k], id)
		}
	}
	s.open = openList(&s.props, st)
	return s
}

// openList returns the entries of st's open proposals, oldest first.
func openList(props *propView, st *state) []*entry {
	out := make([]*entry, 0, len(st.open))
	for id := range st.open {
		out = append(out, props.get(id))
	}
	slices.SortFunc(out, func(a, b *entry) int {
		if c := a.proposed.Compare(b.proposed); c != 0 {
			return c
		}
		return strings.Compare(a.view.ProposalID, b.view.ProposalID)
	})
	return out
}

// lookup finds id as a reader at now: unknown or deleted (tombstone older
// than ttl) → 404; expired, including an open one past expires_at that the
// sweep has not closed yet → 410.
func (s *snapshot) lookup(id string, now time.Time, ttl time.Duration) (*entry, error) {
	e := s.props.get(id)
	if e == nil {
		return nil, errNotFound()
	}
	closed, expired := e.closedAt, e.expired
	if e.open && !now.Before(e.expiresAt) {
		closed, expired = e.expiresAt, true
	}
	if !closed.IsZero() && !now.Before(closed.Add(ttl)) {
		return nil, errNotFound()
	}
	if expired {
		return nil, errExpired()
	}
	return e, nil
}

// publish stores the snapshot after a durable batch that changed ids (or
// HEAD).
func (c *Committer) publish(ids []string, headChanged bool) {
	if len(ids) == 0 && !headChanged {
		return
	}
	c.snap.Store(nextSnapshot(c.snap.Load(), c.st, ids))
}

// Head returns the current HEAD snapshot. It is never a version that is not
// durable in both the log and registry.db. Safe for concurrent use.
func (c *Committer) Head() *Head { return c.snap.Load().head }

// SignerSet returns HEAD's signer set plus the retired ids: what approvals
// for HEAD+1 are checked against.
func (c *Committer) SignerSet() *descriptor.SignerSet { return c.snap.Load().signers }

// Proposal returns the read view of id: 400 bad_request for a malformed
// id, 404 not_found when unknown or its tombstone was deleted, 410 gone
// (reason expired) when expired. The view must not be modified.
func (c *Committer) Proposal(id string) (ProposalView, error) {
	if err := descriptor.ParseProposalID(id); err != nil {
		return ProposalView{}, err
	}
	e, err := c.snap.Load().lookup(id, c.now(), c.limits().TombstoneTTL)
	if err != nil {
		return ProposalView{}, err
	}
	return e.view, nil
}

// OpenProposals returns the open (pending or quorum_met, not yet past
// expires_at) proposals, oldest first.
func (c *Committer) OpenProposals() []registryapi.ProposalSummary {
	now := c.now()
	s := c.snap.Load()
	out := make([]registryapi.ProposalSummary, 0, len(s.open))
	for _, e := range s.open {
		if now.Before(e.expiresAt) {
			out = append(out, e.summary)
		}
	}
	return out
}
