package tenants

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// signerKey is a deterministic test signer key.
var signerKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))

// tenantItem is a registry tenant item.
func tenantItem(id string, rps float64, burst, weight int, bps int64) map[string]any {
	return map[string]any{"kind": "tenant", "id": id, "rps": rps, "burst": burst, "weight": weight, "max_bytes_per_s": bps}
}

// rawSet is a DescriptorSet payload (not canonicalised) at version v after
// prev: one signer, quorum 1 of 1, then items.
func rawSet(t *testing.T, v uint64, prev string, items ...map[string]any) []byte {
	t.Helper()
	pub := base64.StdEncoding.EncodeToString(signerKey.Public().(ed25519.PublicKey))
	all := []map[string]any{
		{"kind": "signer", "id": "org:test#k1", "algo": "ed25519", "pubkey": pub},
		{"kind": "quorum", "id": "quorum", "m": 1, "n": 1},
	}
	raw, err := json.Marshal(map[string]any{"version": v, "prev_hash": prev, "created_at": "2026-01-01T00:00:00Z",
		"items": append(all, items...)})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// validSet is rawSet validated by the registry's rules.
func validSet(t *testing.T, v uint64, prev string, items ...map[string]any) *descriptor.Set {
	t.Helper()
	s, err := descriptor.ParseSet(rawSet(t, v, prev, items...), descriptor.DefaultLimits(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// artifactOf is set's SignedArtifact (approvals are not needed here).
func artifactOf(s *descriptor.Set) descriptor.Artifact {
	return descriptor.Artifact{SchemaVersion: descriptor.ArtifactSchemaVersion, Version: s.Version, Payload: s.Canonical,
		PayloadB3: s.B3, Approvals: []descriptor.Approval{}, PrevHash: s.PrevHash, CommittedAt: s.CreatedAt}
}
