package regstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
)

// InitResult is what `ron registry init` prints: the genesis payload_b3
// and the log's note verifier key.
type InitResult struct {
	PayloadB3   string `json:"payload_b3"`
	VerifierKey string `json:"verifier_key"`
}

// Init is `ron registry init`: it writes genesis (version 0 from the
// trust-roots file, created_at = now) and the first checkpoint covering it
// into <dataDir>/registry, and the log key (named origin, or the default
// ron-registry/<log-id> when empty) into <dataDir>/keys. It refuses when a
// log already exists and when registry.db or tlog.db is locked (a node is
// running on dataDir).
func Init(ctx context.Context, dataDir, trustRootsFile, origin string, now time.Time) (InitResult, error) {
	if trustRootsFile == "" {
		return InitResult{}, errors.New("registry init: a trust-roots file is required")
	}
	tr, err := LoadTrustRoots(trustRootsFile, "")
	if err != nil {
		return InitResult{}, err
	}
	g, err := descriptor.Genesis(tr, now)
	if err != nil {
		return InitResult{}, fmt.Errorf("registry init: genesis: %w", err)
	}
	spec := Spec{DataDir: dataDir, Origin: origin, SegmentRecords: segment.DefaultSegmentRecords}
	st, err := Open(ctx, spec)
	if err != nil {
		return InitResult{}, err
	}
	defer st.Close()
	empty, err := st.Empty(ctx)
	if err != nil {
		return InitResult{}, err
	}
	if !empty {
		return InitResult{}, fmt.Errorf("registry init: a log already exists in %s", st.Dir)
	}
	if err := writeGenesis(ctx, st, g); err != nil {
		return InitResult{}, err
	}
	return InitResult{PayloadB3: g.B3, VerifierKey: st.Key.VerifierKey()}, st.Close()
}

// writeGenesis is Init's core: append genesis through the committer
// (durably, registry.db included) and sign the first checkpoint.
func writeGenesis(ctx context.Context, st *Stores, g *descriptor.Set) error {
	com, err := committer.Open(ctx, committer.Options{Log: st.Log, DB: st.RegDB, Now: time.Now, Logger: zerolog.Nop()}, g, st.Rec)
	if err != nil {
		return fmt.Errorf("registry init: %w", err)
	}
	tctx, cancel := context.WithTimeout(ctx, StoreTimeout)
	defer cancel()
	tree, err := tiles.OpenTree(tctx, st.TlogDB, st.Key)
	if err != nil {
		return fmt.Errorf("registry init: open tlog.db: %w", err)
	}
	if _, err := ExtendTree(ctx, tree, st.Log, com.Head().Version); err != nil {
		return fmt.Errorf("registry init: first checkpoint: %w", err)
	}
	return nil
}
