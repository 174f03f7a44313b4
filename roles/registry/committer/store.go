package committer

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/store/kv"
)

// registry.db layout (docs/registry.md §5).
const (
	BucketMeta        = "meta"
	BucketProposals   = "proposals"
	KeyHead           = "head"            // JSON {version, payload_b3, committed_at}
	KeyOrigin         = "origin"          // the checkpoint origin (written by the role)
	KeyMinIndex       = "min_index"       // u64 big-endian
	KeyRetiredSigners = "retired_signers" // JSON array of signer ids once in force, absent from HEAD
	// KeyLogApplied is the control-plane log index of the last registry
	// entry applied (u64 big-endian; absent outside the control plane).
	KeyLogApplied = "log_applied"
)

// storedHead is the meta/head value.
type storedHead struct {
	Version     uint64 `json:"version"`
	PayloadB3   string `json:"payload_b3"`
	CommittedAt string `json:"committed_at"`
}

// storedProposal is one proposals/<id> value. Times are Unix nanoseconds
// (0 = unset); Payload (canonical JCS) is dropped once expired.
type storedProposal struct {
	ID         string                `json:"id"`
	B3         string                `json:"payload_b3"`
	Version    uint64                `json:"version"`
	Status     string                `json:"status"`
	Payload    []byte                `json:"payload,omitempty"`
	Approvals  []descriptor.Approval `json:"approvals"`
	ProposedAt int64                 `json:"proposed_at"`
	ExpiresAt  int64                 `json:"expires_at"`
	ClosedAt   int64                 `json:"closed_at,omitempty"`
	QuorumM    int                   `json:"quorum_m,omitempty"`
	QuorumN    int                   `json:"quorum_n,omitempty"`
	CommitVer  uint64                `json:"committed_version,omitempty"`
	CommitAt   string                `json:"committed_at,omitempty"`
}

// dbState is what registry.db holds for the committer.
type dbState struct {
	head    *storedHead // nil: no HEAD yet
	logged  bool        // meta/log_applied is set (a replicated registry applied an entry)
	retired []string
	props   []storedProposal
}

// DurableHead returns the HEAD version stored in registry.db, or -1 when
// there is none: the value segment.Options.DurableHead wants.
func DurableHead(ctx context.Context, db kv.DB) (int64, error) {
	var v int64 = -1
	err := db.View(ctx, func(tx kv.Tx) error {
		h, err := readHead(tx)
		if h != nil {
			v = int64(h.Version)
		}
		return err
	})
	return v, err
}

// MinIndex returns meta/min_index (0 when unset).
func MinIndex(ctx context.Context, db kv.DB) (uint64, error) {
	var v uint64
	err := db.View(ctx, func(tx kv.Tx) error {
		if b := tx.Bucket(BucketMeta); b != nil {
			if raw := b.Get([]byte(KeyMinIndex)); len(raw) == 8 {
				v = binary.BigEndian.Uint64(raw)
			}
		}
		return nil
	})
	return v, err
}

// SetMinIndex durably stores meta/min_index = v (retention's first step).
func SetMinIndex(ctx context.Context, db kv.DB, v uint64) error {
	return db.Update(ctx, func(tx kv.Tx) error {
		b, err := tx.CreateBucket(BucketMeta)
		if err != nil {
			return err
		}
		return b.Put([]byte(KeyMinIndex), binary.BigEndian.AppendUint64(nil, v))
	})
}

// readHead decodes meta/head (nil when absent).
func readHead(tx kv.Tx) (*storedHead, error) {
	b := tx.Bucket(BucketMeta)
	if b == nil {
		return nil, nil
	}
	raw := b.Get([]byte(KeyHead))
	if raw == nil {
		return nil, nil
	}
	var h storedHead
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("committer: registry.db meta/head: %w", err)
	}
	return &h, nil
}

// readDB loads the committer's part of registry.db.
func readDB(ctx context.Context, db kv.DB) (dbState, error) {
	var s dbState
	err := db.View(ctx, func(tx kv.Tx) error {
		var err error
		if s.head, err = readHead(tx); err != nil {
			return err
		}
		if b := tx.Bucket(BucketMeta); b != nil {
			s.logged = b.Get([]byte(KeyLogApplied)) != nil
			if raw := b.Get([]byte(KeyRetiredSigners)); raw != nil {
				if err := json.Unmarshal(raw, &s.retired); err != nil {
					return fmt.Errorf("committer: registry.db meta/retired_signers: %w", err)
				}
			}
		}
		s.props, err = readProposals(tx)
		return err
	})
	return s, err
}

// readProposals decodes every proposals/<id> value.
func readProposals(tx kv.Tx) ([]storedProposal, error) {
	b := tx.Bucket(BucketProposals)
	if b == nil {
		return nil, nil
	}
	var out []storedProposal
	cur := b.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		var sp storedProposal
		if err := json.Unmarshal(v, &sp); err != nil {
			return nil, fmt.Errorf("committer: registry.db proposals/%s: %w", k, err)
		}
		out = append(out, sp)
	}
	return out, nil
}

// storeOf encodes p for registry.db.
func storeOf(p *proposal) storedProposal {
	sp := storedProposal{
		ID: p.id, B3: p.b3, Version: p.version, Status: p.status, Approvals: p.approvals,
		ProposedAt: nanos(p.proposedAt), ExpiresAt: nanos(p.expiresAt), ClosedAt: nanos(p.closedAt),
		QuorumM: p.quorum.M, QuorumN: p.quorum.N, CommitVer: p.commitVer, CommitAt: p.commitAt,
	}
	if p.set != nil {
		sp.Payload = p.set.Canonical
	}
	return sp
}

// proposalOf decodes a stored proposal, re-parsing its payload.
func proposalOf(sp storedProposal) (*proposal, error) {
	p := &proposal{
		id: sp.ID, b3: sp.B3, version: sp.Version, status: sp.Status, approvals: sp.Approvals,
		proposedAt: fromNanos(sp.ProposedAt), expiresAt: fromNanos(sp.ExpiresAt), closedAt: fromNanos(sp.ClosedAt),
		quorum: descriptor.Quorum{M: sp.QuorumM, N: sp.QuorumN}, commitVer: sp.CommitVer, commitAt: sp.CommitAt,
	}
	if len(sp.Payload) > 0 {
		set, err := parseStoredSet(sp.Payload)
		if err != nil {
			return nil, fmt.Errorf("committer: registry.db proposals/%s payload: %w", sp.ID, err)
		}
		p.set = set
	}
	if p.set == nil && p.isOpen() {
		return nil, fmt.Errorf("committer: registry.db proposals/%s: open without payload", sp.ID)
	}
	return p, nil
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// parseStoredSet re-parses a stored canonical payload (a proposal's or a
// log record's) under the hard ceiling and without a clock comparison: it
// was checked against the live limits when it was admitted.
func parseStoredSet(raw []byte) (*descriptor.Set, error) { return descriptor.ParseCommitted(raw) }
