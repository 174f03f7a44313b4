package descriptor

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/tooltest"
)

// update rewrites the known-answer files in roles/registry/testdata:
//
//	go test ./roles/registry/registryapi/descriptor -run TestGolden -args -update
var update = flag.Bool("update", false, "rewrite roles/registry/testdata known answers")

const goldenDir = "../../testdata"

// Fixed inputs of the known answers (see roles/registry/testdata/README.md).
var (
	goldenGenesisTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	goldenSignedAt    = time.Date(2026, 1, 1, 11, 5, 0, 0, time.UTC)
	goldenCommittedAt = time.Date(2026, 1, 1, 11, 6, 0, 0, time.UTC)
	goldenNow         = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	goldenK1ID        = "org:ron.example#k1"
)

// goldenSeed returns signer k's seed: 32 consecutive bytes from 32·(k−1).
func goldenSeed(k int) []byte {
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = byte(32*(k-1) + i)
	}
	return s
}

func goldenPub(k int) string {
	return base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(goldenSeed(k)).Public().(ed25519.PublicKey))
}

// goldenSetTemplate is the hand-written DescriptorSet: not canonical on
// purpose (indentation, key order, escapes, 12.50, 1E2, 2.5e3), with keys
// whose JCS order differs between UTF-8 and UTF-16.
const goldenSetTemplate = `{
  "version": 1,
  "prev_hash": "{{GENESIS_B3}}",
  "created_at": "2026-01-01T12:00:00.5+01:00",
  "note": "rotate to 2 of 2 \u00e9t\u00e9 \ud83d\ude00 <&> \"q\" \/",
  "items": [
    {"kind": "signer", "id": "org:ron.example#k1", "algo": "ed25519", "pubkey": "{{K1}}"},
    {"kind": "signer", "id": "org:ron.example#k2", "algo": "ed25519", "pubkey": "{{K2}}", "meta": {"added": "genesis"}},
    {"kind": "quorum", "id": "quorum", "m": 2, "n": 2},
    {"kind": "node", "id": "node-a.eu", "roles": ["storage", "index", "registry"],
     "urls": {"storage": "http://10.0.0.1:5303", "registry": "https://a.ron.example:9444"}, "zone": "eu-west-1"},
    {"kind": "node", "id": "node-b", "roles": ["edge"]},
    {"kind": "tenant", "id": "acme", "rps": 12.50, "burst": 1E2, "weight": 10, "max_bytes_per_s": 1048576, "meta": {"plan": "pro"}},
    {"kind": "tenant", "id": "suspended-co", "rps": 0, "burst": 0, "weight": 1, "max_bytes_per_s": 0},
    {"kind": "service", "id": "svc/maps@v2", "upstreams": ["node-a.eu", "node-b"], "timeout_ms": 2.5e3,
     "flags": {"z": true, "a": null, "\uff61": 3, "\ud83d\ude00": 2, "\u00e9": 1}}
  ]
}
`

const goldenRootsTemplate = `{
  "schema_version": "1.0.0",
  "signers": [
    {"id": "org:ron.example#k1", "algo": "ed25519", "pubkey": "{{K1}}"},
    {"kind": "signer", "id": "org:ron.example#k2", "algo": "ed25519", "pubkey": "{{K2}}"}
  ],
  "quorum": {"m": 1, "n": 2}
}
`

// golden holds every known answer, recomputed from the input files.
type golden struct {
	roots, genesisJCS, genesisArtifact           []byte
	setJSON, setJCS, b3, msg, approval, artifact []byte
	keyFile                                      []byte
}

func computeGolden(t *testing.T, rootsJSON, setJSON []byte) golden {
	t.Helper()
	g := golden{roots: rootsJSON, setJSON: setJSON}
	tr, err := ParseTrustRoots(rootsJSON, "")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := Genesis(tr, goldenGenesisTime)
	if err != nil {
		t.Fatal(err)
	}
	g.genesisJCS = gen.Canonical
	g.genesisArtifact = mustArtifact(t, Artifact{SchemaVersion: ArtifactSchemaVersion, Payload: gen.Canonical,
		PayloadB3: gen.B3, PrevHash: ZeroHash, CommittedAt: gen.CreatedAt})
	set, err := ParseSet(setJSON, DefaultLimits(), goldenNow)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.CheckChain(gen.Version, gen.B3); err != nil {
		t.Fatal(err)
	}
	g.setJCS, g.b3, g.msg = set.Canonical, []byte(set.B3+"\n"), SigningMessage(set.B3)
	ap := Sign(ed25519.NewKeyFromSeed(goldenSeed(1)), goldenK1ID, set.B3, goldenSignedAt)
	if err := NewSignerSet(gen, nil).VerifyQuorum([]Approval{ap}, set.B3); err != nil {
		t.Fatal(err)
	}
	if g.approval, err = EncodeApproval(ap); err != nil {
		t.Fatal(err)
	}
	g.artifact = mustArtifact(t, Artifact{SchemaVersion: ArtifactSchemaVersion, Version: 1, Payload: set.Canonical,
		PayloadB3: set.B3, Approvals: []Approval{ap}, PrevHash: gen.B3, CommittedAt: FormatTime(goldenCommittedAt)})
	g.keyFile = mustJSONIndent(t, map[string]string{"schema_version": "1.0.0", "id": goldenK1ID, "algo": AlgoEd25519,
		"pubkey": goldenPub(1), "private_key": base64.StdEncoding.EncodeToString(goldenSeed(1))})
	return g
}

func mustArtifact(t *testing.T, a Artifact) []byte {
	t.Helper()
	b, err := EncodeArtifact(a)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustJSONIndent(t *testing.T, v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func (g golden) files() map[string][]byte {
	return map[string][]byte{
		"trust-roots.json": g.roots, "genesis.jcs": g.genesisJCS, "genesis-artifact.jcs": g.genesisArtifact,
		"golden-set.json": g.setJSON, "golden-set.jcs": g.setJCS, "golden-set.b3": g.b3,
		"golden-signing-message.bin": g.msg, "golden-approval.jcs": g.approval,
		"golden-artifact.jcs": g.artifact, "golden-signer-k1.key.json": g.keyFile,
	}
}

func renderGoldenInputs(t *testing.T) (roots, set []byte) {
	keys := strings.NewReplacer("{{K1}}", goldenPub(1), "{{K2}}", goldenPub(2))
	roots = []byte(keys.Replace(goldenRootsTemplate))
	tr, err := ParseTrustRoots(roots, "")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := Genesis(tr, goldenGenesisTime)
	if err != nil {
		t.Fatal(err)
	}
	return roots, []byte(strings.ReplaceAll(keys.Replace(goldenSetTemplate), "{{GENESIS_B3}}", gen.B3))
}

// TestGolden recomputes every known answer from the committed inputs
// (trust-roots.json, golden-set.json) and compares byte for byte; with
// -update it rewrites them from the templates above.
func TestGolden(t *testing.T) {
	if *update {
		roots, set := renderGoldenInputs(t)
		for name, b := range computeGolden(t, roots, set).files() {
			if err := os.WriteFile(filepath.Join(goldenDir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	roots, err := os.ReadFile(filepath.Join(goldenDir, "trust-roots.json"))
	if err != nil {
		t.Fatal(err)
	}
	setJSON, err := os.ReadFile(filepath.Join(goldenDir, "golden-set.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range computeGolden(t, roots, setJSON).files() {
		got, err := os.ReadFile(filepath.Join(goldenDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the recomputed value:\n got %q\nwant %q", name, got, want)
		}
	}
	if IsCanonical(setJSON) {
		t.Error("golden-set.json must not be canonical: it exercises canonicalisation")
	}
	msg, _ := os.ReadFile(filepath.Join(goldenDir, "golden-signing-message.bin"))
	if len(msg) != 87 {
		t.Errorf("signing message is %d bytes, want 87", len(msg))
	}
	checkB3sum(t)
}

// checkB3sum compares the b3sum binary's hash of golden-set.jcs with
// golden-set.b3 (skipped only when b3sum is not on PATH).
func checkB3sum(t *testing.T) {
	t.Run("b3sum", func(t *testing.T) {
		bin, err := exec.LookPath("b3sum")
		if err != nil {
			tooltest.Missing(t, "b3sum not on PATH (scripts/test.sh installs it)")
		}
		out, err := exec.Command(bin, "--no-names", filepath.Join(goldenDir, "golden-set.jcs")).Output()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(filepath.Join(goldenDir, "golden-set.b3"))
		if "b3:"+strings.TrimSpace(string(out)) != strings.TrimSpace(string(want)) {
			t.Fatalf("b3sum: %s, golden-set.b3: %s", out, want)
		}
	})
}
