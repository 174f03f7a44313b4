package committer

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
)

// applyCommit runs the docs/registry.md §2 commit checks in order (expired → 410; committed
// → the same 201; stale or HEAD ≠ {version−1, prev_hash} → 409; fewer than
// m valid approvals → 422), then builds the artifact, queues its record
// and moves HEAD in memory.
func (c *Committer) applyCommit(b *batch, m *message, now time.Time) reply {
	st := c.st
	ev := auditEvent{event: evCommitAccepted, proposalID: m.id, corrID: m.corrID}
	p := st.props[m.id]
	c.expireIfDue(b, p, now)
	switch {
	case p == nil:
		return reject(ev, evCommitRejected, errNotFound())
	case p.status == StatusExpired:
		return reject(ev.withVersion(p.version), evCommitRejected, errExpired())
	case p.status == StatusCommitted:
		return reply{committed: committedOf(p), repeat: true, audit: ev.withVersion(p.commitVer)}
	}
	ev.b3 = p.b3
	ev = ev.withVersion(p.version)
	if p.status == StatusStale || !st.extendsHead(p.version, p.set.PrevHash) {
		b.later(c.mt.casFail.Inc)
		return reject(ev, evCommitRejected, errChainMismatch(st.head))
	}
	need := st.quorum().M
	if len(p.approvals) < need {
		return reject(ev, evCommitRejected, errQuorumFailed(len(p.approvals), need))
	}
	valid := c.validApprovals(p)
	if len(valid) < need {
		return reject(ev, evCommitRejected, errQuorumFailed(len(valid), need))
	}
	cm, err := c.moveHead(b, p, valid, now, m.corrID)
	if err != nil {
		return reject(ev, evCommitRejected, err)
	}
	return reply{committed: cm, audit: ev}
}

// committedOf is a committed p's 201 body.
func committedOf(p *proposal) registryapi.Committed {
	return registryapi.Committed{Version: p.commitVer, PayloadB3: p.b3, CommittedAt: p.commitAt}
}

// validApprovals re-verifies every approval of p against HEAD's signer set.
func (c *Committer) validApprovals(p *proposal) []descriptor.Approval {
	out := make([]descriptor.Approval, 0, len(p.approvals))
	for _, a := range p.approvals {
		if c.st.signers.Verify(a, p.b3) == nil {
			out = append(out, a)
		}
	}
	return out
}

// moveHead encodes p's artifact with approvals, queues its log record, and
// commits p in memory: HEAD moves, p becomes a committed tombstone, and the
// other open proposals for that version become stale.
func (c *Committer) moveHead(b *batch, p *proposal, approvals []descriptor.Approval, now time.Time, corrID string) (registryapi.Committed, error) {
	st := c.st
	at := c.nextCommittedAt(now)
	art, err := descriptor.EncodeArtifact(descriptor.Artifact{
		SchemaVersion: descriptor.ArtifactSchemaVersion, Version: p.version, Payload: p.set.Canonical, PayloadB3: p.b3,
		Approvals: approvals, PrevHash: p.set.PrevHash, CommittedAt: at,
	})
	if err != nil {
		return registryapi.Committed{}, errInternal("encode artifact: %v", err)
	}
	if len(art) > MaxLeafBytes {
		return registryapi.Committed{}, errInternal("artifact of %d bytes exceeds the %d-byte leaf limit", len(art), MaxLeafBytes)
	}
	h, err := newHead(p.set, art, at)
	if err != nil {
		return registryapi.Committed{}, errInternal("head: %v", err)
	}
	p.approvals, p.commitVer, p.commitAt = approvals, p.version, at
	st.closeAs(p, StatusCommitted, now)
	st.setHead(h)
	c.markStale(b, now)
	b.records = append(b.records, segment.Record{Version: p.version, CorrID: cleanCorrID(corrID), Artifact: art})
	cm := registryapi.Committed{Version: p.version, PayloadB3: p.b3, CommittedAt: at, CorrID: corrID, Artifact: art}
	b.commits = append(b.commits, cm)
	return cm, nil
}

// nextCommittedAt is now in the committed_at format, or HEAD's value when
// the clock stepped back (committed_at never decreases).
func (c *Committer) nextCommittedAt(now time.Time) string {
	t := now.UTC().Truncate(time.Millisecond)
	prev, err := time.Parse(time.RFC3339Nano, c.st.head.CommittedAt)
	if err == nil && t.Before(prev) {
		return c.st.head.CommittedAt
	}
	return descriptor.FormatTime(t)
}

// newHead builds a HEAD snapshot with its pre-encoded /registry/head body.
func newHead(set *descriptor.Set, artifact []byte, committedAt string) (*Head, error) {
	body, err := json.Marshal(storedHead{Version: set.Version, PayloadB3: set.B3, CommittedAt: committedAt})
	if err != nil {
		return nil, err
	}
	hex := strings.TrimPrefix(set.B3, "b3:")
	if len(hex) > 16 {
		hex = hex[:16]
	}
	return &Head{
		Version: set.Version, PayloadB3: set.B3, CommittedAt: committedAt, Set: set, Artifact: artifact,
		Body: body, ETag: fmt.Sprintf(`"%d-%s"`, set.Version, hex),
	}, nil
}

// cleanCorrID makes a corr id fit a segment record: printable ASCII only,
// at most 64 bytes.
func cleanCorrID(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < segment.MaxCorrID; i++ {
		if s[i] > 0x20 && s[i] < 0x7f {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
