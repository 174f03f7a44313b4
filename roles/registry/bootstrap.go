package registry

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/segment"
)

// maxTrustRootsFile bounds how much of a trust-roots file is read.
const maxTrustRootsFile = 1 << 20

// genesisPlan is how a start bootstraps: the genesis set to append when
// no log exists (nil otherwise) and the dev signer in use, if any.
type genesisPlan struct {
	genesis *descriptor.Set
	dev     *devSigner
}

// planGenesis decides the bootstrap of docs/registry.md §6 for a store
// with no log: trust roots (pinned by trust_roots_b3 when set), else the
// dev signer when allowed, else an error.
func planGenesis(cfg Config, spec storeSpec, now time.Time) (genesisPlan, error) {
	if cfg.TrustRoots != "" {
		tr, err := loadTrustRoots(cfg.TrustRoots, cfg.TrustRootsB3)
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
	dev, err := obtainDevSigner(spec)
	if err != nil {
		return genesisPlan{}, err
	}
	g, err := descriptor.Genesis(dev.trustRoots(), now)
	if err != nil {
		return genesisPlan{}, fmt.Errorf("registry: dev signer genesis: %w", err)
	}
	return genesisPlan{genesis: g, dev: dev}, nil
}

// loadTrustRoots reads and checks the trust-roots file (pinned when pin is
// set). Errors name the config key.
func loadTrustRoots(path, pin string) (descriptor.TrustRoots, error) {
	raw, err := readSmallFile(path, maxTrustRootsFile)
	if err != nil {
		return descriptor.TrustRoots{}, fmt.Errorf("registry.trust_roots: %w", err)
	}
	tr, err := descriptor.ParseTrustRoots(raw, pin)
	if err != nil {
		key := "trust_roots"
		if reasonOf(err) == descriptor.ReasonPinMismatch {
			key = "trust_roots_b3"
		}
		return descriptor.TrustRoots{}, fmt.Errorf("registry.%s: %s: %w", key, path, err)
	}
	return tr, nil
}

// reasonOf returns details.reason of a descriptor (*httpx.Error) error, or
// "" when it has none.
func reasonOf(err error) string {
	var he *httpx.Error
	if !errors.As(err, &he) {
		return ""
	}
	r, _ := he.Details["reason"].(string)
	return r
}

// readSmallFile reads at most limit bytes of path; a larger file is an
// error.
func readSmallFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, nil
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
	tr, err := loadTrustRoots(cfg.TrustRoots, cfg.TrustRootsB3)
	if err != nil {
		r.log.Warn().Err(err).Msg("a registry log exists: registry.trust_roots is ignored (and unreadable)")
		return
	}
	if diff := compareTrustRoots(log, tr); diff != "" {
		r.log.Warn().Str("difference", diff).Msg("a registry log exists: registry.trust_roots is ignored and differs from its genesis")
	}
}

// devSignerOf returns the dev signer of an existing on-disk log: its key
// file, when it exists and its key is in force in HEAD's signer set.
func devSignerOf(spec storeSpec, head *descriptor.Set) *devSigner {
	if spec.amnesia {
		return nil
	}
	dev, err := readDevSigner(DevSignerPath(spec.dataDir))
	if err != nil {
		return nil
	}
	for _, s := range head.Signers {
		if s.ID == dev.id && bytes.Equal(s.Pubkey, dev.key.Public().(ed25519.PublicKey)) {
			return dev
		}
	}
	return nil
}

// InitResult is what `ron registry init` prints: the genesis payload_b3
// and the log's note verifier key.
type InitResult struct {
	PayloadB3   string `json:"payload_b3"`
	VerifierKey string `json:"verifier_key"`
}

// InitStore is `ron registry init`: it writes genesis (version 0 from the
// trust-roots file, created_at = now) and the first checkpoint covering it
// into <dataDir>/registry, and the log key (named origin, or the default
// ron-registry/<log-id> when empty) into <dataDir>/keys. It refuses when a
// log already exists and when registry.db or tlog.db is locked (a node is
// running on dataDir).
func InitStore(ctx context.Context, dataDir, trustRootsFile, origin string, now time.Time) (InitResult, error) {
	if trustRootsFile == "" {
		return InitResult{}, errors.New("registry init: a trust-roots file is required")
	}
	tr, err := loadTrustRoots(trustRootsFile, "")
	if err != nil {
		return InitResult{}, err
	}
	g, err := descriptor.Genesis(tr, now)
	if err != nil {
		return InitResult{}, fmt.Errorf("registry init: genesis: %w", err)
	}
	spec := storeSpec{dataDir: dataDir, origin: origin, segmentRecords: segment.DefaultSegmentRecords}
	st, err := openStores(ctx, spec)
	if err != nil {
		return InitResult{}, err
	}
	defer st.close()
	empty, err := st.empty(ctx)
	if err != nil {
		return InitResult{}, err
	}
	if !empty {
		return InitResult{}, fmt.Errorf("registry init: a log already exists in %s", st.dir)
	}
	if err := writeGenesis(ctx, st, g); err != nil {
		return InitResult{}, err
	}
	return InitResult{PayloadB3: g.B3, VerifierKey: st.key.VerifierKey()}, st.close()
}
