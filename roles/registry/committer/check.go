package committer

import (
	"context"

	"errors"
	"fmt"
	"github.com/ronhq/ron/store/kv"

	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
)

// MaxTokenBytes bounds an Effects token.
const MaxTokenBytes = 64

// Check validates fx as it arrives in a log entry (the registry's state
// machine refuses an entry that fails it, on every member alike): records
// run in consecutive versions, each frames (corr_id, artifact size) and
// parses as an artifact of its version; HEAD, when present, carries the
// retired list and is the last record's version when there are records;
// proposals and deleted ids are well formed, each id at most once; the
// token is at most MaxTokenBytes of printable ASCII.
func (fx Effects) Check() error {
	if len(fx.Token) > MaxTokenBytes || !printable(fx.Token) {
		return errors.New("effects: token is not up to 64 printable ASCII bytes")
	}
	for i, r := range fx.Records {
		if i > 0 && r.Version != fx.Records[i-1].Version+1 {
			return fmt.Errorf("effects: record %d has version %d after %d", i, r.Version, fx.Records[i-1].Version)
		}
		if len(r.CorrID) > segment.MaxCorrID || !printable(r.CorrID) {
			return fmt.Errorf("effects: record %d: corr_id is not up to %d printable ASCII bytes", i, segment.MaxCorrID)
		}
		if len(r.Artifact) == 0 || len(r.Artifact) > segment.MaxArtifact {
			return fmt.Errorf("effects: record %d: artifact of %d bytes", i, len(r.Artifact))
		}
		if err := CheckRecord(r.Version, r.Artifact); err != nil {
			return fmt.Errorf("effects: record %d: %w", i, err)
		}
	}
	if err := fx.checkHead(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, sp := range fx.Proposals {
		if err := checkStored(sp); err != nil {
			return fmt.Errorf("effects: proposal %d: %w", i, err)
		}
		if seen[sp.ID] {
			return fmt.Errorf("effects: proposal %s twice", sp.ID)
		}
		seen[sp.ID] = true
	}
	for _, id := range fx.Deleted {
		if err := descriptor.ParseProposalID(id); err != nil || seen[id] {
			return fmt.Errorf("effects: deleted id %q is malformed or repeated", id)
		}
		seen[id] = true
	}
	return nil
}

// checkHead checks fx's HEAD against its records and retired list.
func (fx Effects) checkHead() error {
	if fx.Head == nil {
		if fx.Retired != nil {
			return errors.New("effects: retired signers without a HEAD")
		}
		return nil
	}
	if fx.Retired == nil {
		return errors.New("effects: a HEAD without the retired signers")
	}
	if n := len(fx.Records); n > 0 && fx.Records[n-1].Version != fx.Head.Version {
		return fmt.Errorf("effects: HEAD %d is not the last record %d", fx.Head.Version, fx.Records[n-1].Version)
	}
	if !descriptor.IsB3(fx.Head.PayloadB3) {
		return fmt.Errorf("effects: HEAD payload_b3 %q", fx.Head.PayloadB3)
	}
	return nil
}

// checkStored checks one stored proposal's shape: its id matches its
// payload_b3, its status is known, an open one carries its payload.
func checkStored(sp storedProposal) error {
	if err := descriptor.ParseProposalID(sp.ID); err != nil {
		return err
	}
	if !descriptor.IsB3(sp.B3) {
		return fmt.Errorf("payload_b3 %q", sp.B3)
	}
	if descriptor.ProposalID(sp.B3) != sp.ID {
		return fmt.Errorf("id %s does not match payload_b3", sp.ID)
	}
	switch sp.Status {
	case StatusPending, StatusQuorumMet, StatusCommitted, StatusStale, StatusExpired:
	default:
		return fmt.Errorf("status %q", sp.Status)
	}
	_, err := proposalOf(sp)
	return err
}

// printable reports whether s is printable ASCII (0x20–0x7e).
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// GenesisEffects returns the effects that create a log at genesis g: the
// version-0 record (no approvals, committed_at = created_at) and HEAD with
// no retired signers. The init entry of a replicated registry carries them.
func GenesisEffects(g *descriptor.Set) (Effects, error) {
	if g.Version != 0 || g.PrevHash != descriptor.ZeroHash {
		return Effects{}, errors.New("committer: genesis must be version 0 with the zero prev_hash")
	}
	art, err := descriptor.EncodeArtifact(descriptor.Artifact{
		SchemaVersion: descriptor.ArtifactSchemaVersion, Version: 0, Payload: g.Canonical, PayloadB3: g.B3,
		Approvals: []descriptor.Approval{}, PrevHash: g.PrevHash, CommittedAt: g.CreatedAt,
	})
	if err != nil {
		return Effects{}, fmt.Errorf("committer: genesis artifact: %w", err)
	}
	return Effects{Records: []segment.Record{{Version: 0, Artifact: art}},
		Head: &storedHead{Version: 0, PayloadB3: g.B3, CommittedAt: g.CreatedAt}, Retired: []string{}}, nil
}

// HeadVersion is fx's HEAD version, ok false when fx moves no HEAD.
func (fx Effects) HeadVersion() (v uint64, ok bool) {
	if fx.Head == nil {
		return 0, false
	}
	return fx.Head.Version, true
}

// StateEffects returns registry.db's state as effects without records:
// HEAD with the retired signers and every stored proposal. A registry that
// held a chain before the control plane proposes them last, after its
// records, so every member ends with its state.
func StateEffects(ctx context.Context, db kv.DB) (Effects, error) {
	ds, err := readDB(ctx, db)
	if err != nil {
		return Effects{}, err
	}
	fx := Effects{Head: ds.head, Proposals: ds.props}
	if fx.Head != nil {
		fx.Retired = ds.retired
		if fx.Retired == nil {
			fx.Retired = []string{}
		}
	}
	return fx, nil
}
