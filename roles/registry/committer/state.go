package committer

import (
	"slices"
	"strings"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// proposal is the committer's private, mutable record of one proposal. Only
// the committer goroutine touches it; readers see ProposalView copies.
type proposal struct {
	id         string
	b3         string
	version    uint64
	set        *descriptor.Set       // nil once expired (the payload is no longer served)
	status     string                // one of the Status* constants
	approvals  []descriptor.Approval // sorted by signer id (byte order)
	proposedAt time.Time
	expiresAt  time.Time
	closedAt   time.Time         // zero while open; tombstone age starts here
	quorum     descriptor.Quorum // quorum in force when it closed
	commitVer  uint64            // committed: its version
	commitAt   string            // committed: its committed_at
}

// isOpen reports whether p is pending or quorum_met.
func (p *proposal) isOpen() bool { return p.status == StatusPending || p.status == StatusQuorumMet }

// approval returns the approval of signerID, if any.
func (p *proposal) approval(signerID string) (descriptor.Approval, bool) {
	i, ok := slices.BinarySearchFunc(p.approvals, signerID, func(a descriptor.Approval, id string) int {
		return strings.Compare(a.SignerID, id)
	})
	if !ok {
		return descriptor.Approval{}, false
	}
	return p.approvals[i], true
}

// addApproval inserts a (not yet present) keeping signer-id order.
func (p *proposal) addApproval(a descriptor.Approval) {
	i, _ := slices.BinarySearchFunc(p.approvals, a.SignerID, func(x descriptor.Approval, id string) int {
		return strings.Compare(x.SignerID, id)
	})
	p.approvals = slices.Insert(slices.Clone(p.approvals), i, a)
}

// tombRef remembers when a tombstone was made, in closure order.
type tombRef struct {
	id       string
	closedAt time.Time
}

// state is the committer's working state: HEAD, the signer set and the
// proposal map. It is owned by the committer goroutine; a batch mutates it
// and records what changed in dirty/headDirty for the registry.db write.
type state struct {
	head    *Head
	retired []string // sorted: ids once in force, absent from HEAD's set
	signers *descriptor.SignerSet
	props   map[string]*proposal // open proposals and tombstones
	open    map[string]*proposal // the open subset
	tombs   []tombRef            // closure order; entries may be outdated (checked on use)
	nTombs  int

	dirty     map[string]bool // proposal ids written (or deleted) in this batch
	headDirty bool            // head or retired changed in this batch
}

func newState() *state {
	return &state{props: map[string]*proposal{}, open: map[string]*proposal{}, dirty: map[string]bool{}}
}

// everInForce returns the ids of every signer ever in force.
func (st *state) everInForce() []string {
	ids := slices.Clone(st.retired)
	for _, s := range st.head.Set.Signers {
		ids = append(ids, s.ID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// setHead moves HEAD to h, retiring signers of the old HEAD that h drops.
func (st *state) setHead(h *Head) {
	if st.head != nil {
		keep := map[string]bool{}
		for _, s := range h.Set.Signers {
			keep[s.ID] = true
		}
		ids := slices.Clone(st.retired)
		for _, s := range st.head.Set.Signers {
			ids = append(ids, s.ID)
		}
		ids = slices.DeleteFunc(ids, func(id string) bool { return keep[id] })
		slices.Sort(ids)
		st.retired = slices.Compact(ids)
	}
	st.head = h
	st.signers = descriptor.NewSignerSet(h.Set, st.everInForce())
	st.headDirty = true
}

// quorum returns HEAD's quorum: the one approvals for HEAD+1 need.
func (st *state) quorum() descriptor.Quorum { return st.head.Set.Quorum }

// extendsHead reports whether a set with this version and prev_hash is the
// next version of HEAD.
func (st *state) extendsHead(version uint64, prevHash string) bool {
	return version == st.head.Version+1 && prevHash == st.head.PayloadB3
}

// insert adds p as a new open proposal, replacing any tombstone of its id.
func (st *state) insert(p *proposal) {
	if old := st.props[p.id]; old != nil && !old.isOpen() {
		st.nTombs--
	}
	st.props[p.id] = p
	st.open[p.id] = p
	st.dirty[p.id] = true
}

// closeAs moves an open p to a tombstone with status at time at.
func (st *state) closeAs(p *proposal, status string, at time.Time) {
	p.status, p.closedAt, p.quorum = status, at, st.quorum()
	if status == StatusExpired {
		p.set = nil
	}
	delete(st.open, p.id)
	st.nTombs++
	st.tombs = append(st.tombs, tombRef{id: p.id, closedAt: at})
	st.dirty[p.id] = true
}

// drop forgets proposal id, open or a tombstone, without marking anything
// dirty (a follower applying what the stores already hold).
func (st *state) drop(id string) {
	p := st.props[id]
	if p == nil {
		return
	}
	if p.isOpen() {
		delete(st.open, id)
	} else {
		st.nTombs--
	}
	delete(st.props, id)
}

// remove deletes tombstone p.
func (st *state) remove(p *proposal) {
	delete(st.props, p.id)
	st.nTombs--
	st.dirty[p.id] = true
}

// refreshStatus sets an open p to pending or quorum_met from its count.
func (st *state) refreshStatus(p *proposal) {
	p.status = StatusPending
	if len(p.approvals) >= st.quorum().M {
		p.status = StatusQuorumMet
	}
}

// liveTomb returns the tombstone r still refers to, or nil when r is
// outdated (deleted, or re-proposed and maybe closed again later).
func (st *state) liveTomb(r tombRef) *proposal {
	p := st.props[r.id]
	if p == nil || p.isOpen() || !p.closedAt.Equal(r.closedAt) {
		return nil
	}
	return p
}

// evictOverCap deletes the oldest tombstones beyond MaxTombstones and
// compacts the closure-order list when it holds mostly outdated entries.
func (st *state) evictOverCap() {
	for st.nTombs > MaxTombstones && len(st.tombs) > 0 {
		if p := st.liveTomb(st.tombs[0]); p != nil {
			st.remove(p)
		}
		st.tombs = st.tombs[1:]
	}
	if len(st.tombs) > 2*st.nTombs+64 {
		st.tombs = slices.DeleteFunc(slices.Clone(st.tombs), func(r tombRef) bool { return st.liveTomb(r) == nil })
	}
}

// takeDirty returns and resets the batch's change set.
func (st *state) takeDirty() (ids []string, head bool) {
	for id := range st.dirty {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	head = st.headDirty
	st.dirty, st.headDirty = map[string]bool{}, false
	return ids, head
}
