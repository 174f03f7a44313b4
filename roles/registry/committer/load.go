package committer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
)

// load builds the working state from registry.db and the log, makes the
// result durable and publishes the first snapshot (Open and reload).
func (c *Committer) load(ctx context.Context, genesis *descriptor.Set, beyond []segment.Record) error {
	ds, err := readDB(ctx, c.db)
	if err != nil {
		return err
	}
	c.st = newState()
	c.st.retired = ds.retired
	b := &batch{}
	if err := c.loadHead(ds.head, genesis); err != nil {
		return err
	}
	if err := c.loadProposals(ds.props); err != nil {
		return err
	}
	if err := c.rollForward(b, beyond); err != nil {
		return err
	}
	now := c.now()
	c.markStale(b, now)
	c.sweepState(b, now, c.limits())
	ids, headDirty := c.st.takeDirty()
	if err := c.persist(b, ids, headDirty); err != nil {
		return fmt.Errorf("committer: open: %w", err)
	}
	c.snap.Store(fullSnapshot(c.st))
	for _, fn := range b.after {
		fn()
	}
	return nil
}

// reload rebuilds the state from the stores (a Run restarted after a
// panic mid-batch); records the log holds beyond the stored HEAD roll
// forward.
func (c *Committer) reload(ctx context.Context) error {
	return c.load(ctx, nil, nil)
}

// loadHead sets HEAD from registry.db's stored version (read back from the
// log), or appends genesis to an empty log, or leaves HEAD unset for roll
// forward from version 0.
func (c *Committer) loadHead(sh *storedHead, genesis *descriptor.Set) error {
	switch {
	case sh != nil:
		if sh.Version >= c.log.Next() {
			return fmt.Errorf("committer: registry.db HEAD %d is beyond the log (next %d)", sh.Version, c.log.Next())
		}
		h, err := c.readHead(sh.Version)
		if err != nil {
			return err
		}
		if h.PayloadB3 != sh.PayloadB3 {
			return fmt.Errorf("committer: registry.db HEAD %d payload_b3 %s ≠ log's %s", sh.Version, sh.PayloadB3, h.PayloadB3)
		}
		c.st.setHead(h)
	case c.log.Next() > 0:
		return nil // no stored HEAD yet: roll forward from version 0
	case genesis == nil:
		return errors.New("committer: empty log and no genesis")
	default:
		return c.appendGenesis(genesis)
	}
	return nil
}

// appendGenesis writes version 0 (no approvals, committed_at = created_at)
// to the empty log, fsynced; registry.db follows in load's persist.
func (c *Committer) appendGenesis(g *descriptor.Set) error {
	if g.Version != 0 || g.PrevHash != descriptor.ZeroHash {
		return fmt.Errorf("committer: genesis must be version 0 with the zero prev_hash")
	}
	art, err := descriptor.EncodeArtifact(descriptor.Artifact{
		SchemaVersion: descriptor.ArtifactSchemaVersion, Version: 0, Payload: g.Canonical, PayloadB3: g.B3,
		Approvals: []descriptor.Approval{}, PrevHash: g.PrevHash, CommittedAt: g.CreatedAt,
	})
	if err != nil {
		return fmt.Errorf("committer: genesis artifact: %w", err)
	}
	if err := c.log.Append([]segment.Record{{Version: 0, Artifact: art}}); err != nil {
		return fmt.Errorf("committer: append genesis: %w", err)
	}
	h, err := newHead(g, art, g.CreatedAt)
	if err != nil {
		return err
	}
	c.st.setHead(h)
	return nil
}

// readHead reads version v from the log as a HEAD.
func (c *Committer) readHead(v uint64) (*Head, error) {
	rec, err := c.log.Read(v)
	if err != nil {
		return nil, fmt.Errorf("committer: read HEAD %d: %w", v, err)
	}
	h, _, err := headOf(rec)
	return h, err
}

// headOf parses a log record into a HEAD and its artifact.
func headOf(rec segment.Record) (*Head, descriptor.Artifact, error) {
	art, err := descriptor.ParseArtifact(rec.Artifact)
	if err != nil {
		return nil, art, fmt.Errorf("committer: log version %d: %w", rec.Version, err)
	}
	set, err := parseStoredSet(art.Payload)
	if err != nil {
		return nil, art, fmt.Errorf("committer: log version %d payload: %w", rec.Version, err)
	}
	if set.Version != rec.Version || set.B3 != art.PayloadB3 {
		return nil, art, fmt.Errorf("committer: log version %d: record and artifact disagree", rec.Version)
	}
	h, err := newHead(set, rec.Artifact, art.CommittedAt)
	return h, art, err
}

// loadProposals installs the stored proposals; tombstones are queued for
// eviction oldest first.
func (c *Committer) loadProposals(sps []storedProposal) error {
	st := c.st
	for _, sp := range sps {
		p, err := proposalOf(sp)
		if err != nil {
			return err
		}
		st.props[p.id] = p
		if p.isOpen() {
			st.open[p.id] = p
			continue
		}
		st.nTombs++
		st.tombs = append(st.tombs, tombRef{id: p.id, closedAt: p.closedAt})
	}
	slices.SortFunc(st.tombs, func(a, b tombRef) int {
		if x := a.closedAt.Compare(b.closedAt); x != 0 {
			return x
		}
		return strings.Compare(a.id, b.id)
	})
	return nil
}

// rollForward applies log records beyond the stored HEAD: first beyond
// (the segment recovery's list), then anything else the log holds.
func (c *Committer) rollForward(b *batch, beyond []segment.Record) error {
	for _, rec := range beyond {
		if c.st.head != nil && rec.Version <= c.st.head.Version {
			continue
		}
		if err := c.rollOne(b, rec); err != nil {
			return err
		}
	}
	from := uint64(0)
	if c.st.head != nil {
		from = c.st.head.Version + 1
	}
	if from >= c.log.Next() {
		return nil
	}
	return c.log.Scan(from, c.log.Next()-1, func(rec segment.Record) error { return c.rollOne(b, rec) })
}

// rollOne moves HEAD to a durable record whose 201 may have been lost: the
// matching proposal (by its deterministic id) becomes committed, others
// for that version stale.
func (c *Committer) rollOne(b *batch, rec segment.Record) error {
	st := c.st
	h, art, err := headOf(rec)
	if err != nil {
		return err
	}
	if st.head == nil && h.Version != 0 {
		return fmt.Errorf("committer: log starts at version %d with no stored HEAD", h.Version)
	}
	if st.head != nil && !st.extendsHead(h.Version, h.Set.PrevHash) {
		return fmt.Errorf("committer: log version %d does not extend HEAD %d", h.Version, st.head.Version)
	}
	now := c.now()
	if h.Version > 0 {
		c.markRolled(h, art, now)
	}
	st.setHead(h)
	c.markStale(b, now)
	ev := auditEvent{event: evRollForward, proposalID: descriptor.ProposalID(h.PayloadB3), b3: h.PayloadB3,
		corrID: rec.CorrID}.withVersion(h.Version)
	b.later(func() { c.emit(ev) })
	return nil
}

// markRolled records the proposal of a rolled-forward commit as committed
// (creating its tombstone if registry.db never saw it).
func (c *Committer) markRolled(h *Head, art descriptor.Artifact, now time.Time) {
	st := c.st
	id := descriptor.ProposalID(h.PayloadB3)
	p := st.props[id]
	if p == nil {
		p = &proposal{id: id, b3: h.PayloadB3, version: h.Version, set: h.Set, status: StatusPending,
			proposedAt: now, expiresAt: now}
		st.insert(p)
	}
	p.set, p.approvals, p.commitVer, p.commitAt = h.Set, art.Approvals, h.Version, h.CommittedAt
	if p.isOpen() {
		st.closeAs(p, StatusCommitted, now)
		return
	}
	p.status, p.quorum = StatusCommitted, st.quorum()
	st.dirty[p.id] = true
}

// CheckRecord is the segment.Options.Check the registry uses: the artifact
// parses as a SignedArtifact and carries the record's version.
func CheckRecord(version uint64, artifact []byte) error {
	art, err := descriptor.ParseArtifact(artifact)
	if err != nil {
		return err
	}
	if art.Version != version {
		return fmt.Errorf("artifact version %d in the record of version %d", art.Version, version)
	}
	return nil
}
