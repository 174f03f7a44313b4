package committer

import (
	"encoding/json"
	"fmt"

	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/store/kv"
)

// Effects are what one batch changes in the stores, all of it decided by
// the committer that ran the batch (times included): the log records it
// appends, the proposals it writes (their stored form) or deletes, and
// HEAD with the retired signers when HEAD moved. Applying effects reads no
// clock and no state but the stores', so every member of the control plane
// that applies the same effects in the same order holds the same registry
// (docs/cluster.md §14).
type Effects struct {
	// Token names the batch that made the effects (chosen by the leader's
	// committer, unique per batch; "" outside replicated mode): the
	// committer that proposed them recognises its own batch when the state
	// machine applies it (docs/cluster.md §14).
	Token     string           `json:"token,omitempty"`
	Records   []segment.Record `json:"records,omitempty"`
	Proposals []storedProposal `json:"proposals,omitempty"`
	Deleted   []string         `json:"deleted,omitempty"`
	Head      *storedHead      `json:"head,omitempty"`
	Retired   []string         `json:"retired"` // null without a HEAD; [] when none retired
}

// touchesDB reports whether fx changes registry.db.
func (fx Effects) touchesDB() bool {
	return len(fx.Proposals) > 0 || len(fx.Deleted) > 0 || fx.Head != nil
}

// effectsOf collects the effects of batch b from the working state: b's
// records, the proposals named by ids (deleted when st no longer has them)
// and HEAD with the retired signers when headDirty.
func effectsOf(st *state, b *batch, ids []string, headDirty bool) Effects {
	fx := Effects{Records: b.records}
	for _, id := range ids {
		if p := st.props[id]; p != nil {
			fx.Proposals = append(fx.Proposals, storeOf(p))
		} else {
			fx.Deleted = append(fx.Deleted, id)
		}
	}
	if headDirty {
		fx.Head = &storedHead{Version: st.head.Version, PayloadB3: st.head.PayloadB3, CommittedAt: st.head.CommittedAt}
		fx.Retired = st.retired
		if fx.Retired == nil {
			fx.Retired = []string{}
		}
	}
	return fx
}

// WriteEffects stores fx's HEAD, retired signers and proposals in tx (the
// log records are the caller's: they go to the segment log first). The
// registry's replicated state machine calls it inside its own transaction.
func WriteEffects(tx kv.Tx, fx Effects) error { return writeEffects(tx, fx) }

// writeEffects stores fx's HEAD, retired signers and proposals in tx.
func writeEffects(tx kv.Tx, fx Effects) error {
	meta, err := tx.CreateBucket(BucketMeta)
	if err != nil {
		return err
	}
	props, err := tx.CreateBucket(BucketProposals)
	if err != nil {
		return err
	}
	if fx.Head != nil {
		if err := putJSON(meta, KeyHead, fx.Head); err != nil {
			return err
		}
		if err := putJSON(meta, KeyRetiredSigners, fx.Retired); err != nil {
			return err
		}
	}
	for _, sp := range fx.Proposals {
		if err := putJSON(props, sp.ID, sp); err != nil {
			return err
		}
	}
	for _, id := range fx.Deleted {
		if err := props.Delete([]byte(id)); err != nil {
			return err
		}
	}
	return nil
}

// putJSON stores v's JSON under key.
func putJSON(b kv.Bucket, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("committer: encode %s: %w", key, err)
	}
	return b.Put([]byte(key), raw)
}
