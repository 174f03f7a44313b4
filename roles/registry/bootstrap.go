package registry

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/regstore"
	"github.com/ronhq/ron/roles/registry/segment"
)

// genesisPlan is how a start bootstraps: the genesis set to append when
// no log exists (nil otherwise) and the dev signer in use, if any.
type genesisPlan struct {
	genesis *descriptor.Set
	dev     *regstore.DevSigner
}

// planGenesis decides the bootstrap of docs/registry.md §6 for a store
// with no log: trust roots (pinned by trust_roots_b3 when set), else the
// dev signer when allowed, else an error.
func planGenesis(cfg Config, spec regstore.Spec, now time.Time) (genesisPlan, error) {
	if cfg.TrustRoots != "" {
		tr, err := regstore.LoadTrustRoots(cfg.TrustRoots, cfg.TrustRootsB3)
		if err != nil {
			return genesisPlan{}, err
		}
		g, err := descriptor.Genesis(tr, now)
		if err != nil {
			return genesisPlan{}, fmt.Errorf("registry.trust_roots: genesis: %w", err)
		}
		return genesisPlan{genesis: g}, nil
	}
	if !cfg.AllowDevSigner {
		return genesisPlan{}, errors.New("registry: no log exists and neither registry.trust_roots nor registry.allow_dev_signer is set")
	}
	dev, err := regstore.ObtainDevSigner(spec)
	if err != nil {
		return genesisPlan{}, err
	}
	g, err := descriptor.Genesis(dev.TrustRoots(), now)
	if err != nil {
		return genesisPlan{}, fmt.Errorf("registry: dev signer genesis: %w", err)
	}
	return genesisPlan{genesis: g, dev: dev}, nil
}

// compareTrustRoots checks configured trust roots against an existing
// log's genesis (version 0) and returns a description of the difference,
// or "" when they match or cannot be compared (genesis pruned).
func compareTrustRoots(log *segment.Log, tr descriptor.TrustRoots) string {
	if log.MinIndex() > 0 {
		return ""
	}
	rec, err := log.Read(0)
	if err != nil {
		return fmt.Sprintf("genesis unreadable: %v", err)
	}
	art, err := descriptor.ParseArtifact(rec.Artifact)
	if err != nil {
		return fmt.Sprintf("genesis unreadable: %v", err)
	}
	g, err := descriptor.ParseCommitted(art.Payload)
	if err != nil {
		return fmt.Sprintf("genesis unreadable: %v", err)
	}
	if g.Quorum != tr.Quorum {
		return fmt.Sprintf("genesis quorum is %d of %d, trust roots say %d of %d", g.Quorum.M, g.Quorum.N, tr.Quorum.M, tr.Quorum.N)
	}
	if len(g.Signers) != len(tr.Signers) {
		return fmt.Sprintf("genesis has %d signers, trust roots %d", len(g.Signers), len(tr.Signers))
	}
	for i, s := range g.Signers {
		if s.ID != tr.Signers[i].ID || !bytes.Equal(s.Pubkey, tr.Signers[i].Pubkey) {
			return fmt.Sprintf("genesis signer %d is %s, trust roots name %s", i, s.ID, tr.Signers[i].ID)
		}
	}
	return ""
}

// warnTrustRoots logs, at warn, that configured trust roots are ignored
// because a log exists, naming how they differ from its genesis.
func (r *Role) warnTrustRoots(cfg Config, log *segment.Log) {
	if cfg.TrustRoots == "" {
		return
	}
	tr, err := regstore.LoadTrustRoots(cfg.TrustRoots, cfg.TrustRootsB3)
	if err != nil {
		r.Log.Warn().Err(err).Msg("a registry log exists: registry.trust_roots is ignored (and unreadable)")
		return
	}
	if diff := compareTrustRoots(log, tr); diff != "" {
		r.Log.Warn().Str("difference", diff).Msg("a registry log exists: registry.trust_roots is ignored and differs from its genesis")
	}
}

// devSignerOf returns the dev signer of an existing on-disk log: its key
// file, when it exists and its key is in force in HEAD's signer set.
func devSignerOf(spec regstore.Spec, head *descriptor.Set) *regstore.DevSigner {
	if spec.Amnesia {
		return nil
	}
	dev, err := regstore.ReadDevSigner(regstore.DevSignerPath(spec.DataDir))
	if err != nil {
		return nil
	}
	for _, s := range head.Signers {
		if s.ID == dev.ID && bytes.Equal(s.Pubkey, dev.Key.Public().(ed25519.PublicKey)) {
			return dev
		}
	}
	return nil
}
