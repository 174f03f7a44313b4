package regstore

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/store/durable"
)

// Dev signer of docs/registry.md §6: one signer, quorum 1 of 1.
const (
	// DevSignerID is the dev signer's id.
	DevSignerID = "org:dev#k1"
	// DevSignerFile is the dev signer key's file name in <data>/keys.
	DevSignerFile = "registry-dev-signer.key"
	// maxDevKeyFile bounds how much of the key file is read.
	maxDevKeyFile = 4096
)

// DevSignerPath is the dev signer key file of a data directory:
// <dataDir>/keys/registry-dev-signer.key. The file has the shape `ron
// registry keygen` writes: {schema_version, id, algo, pubkey, private_key}
// with private_key the std base64 of the 32-byte Ed25519 seed (mode 0600).
func DevSignerPath(dataDir string) string {
	return filepath.Join(dataDir, "keys", DevSignerFile)
}

// DevSigner is the dev mode signer key.
type DevSigner struct {
	ID   string             // the signer id (DevSignerID when created here)
	Key  ed25519.PrivateKey // the signing key
	Path string             // its key file; "" in amnesia (memory only)
}

// devKeyFile is the JSON shape of the key file.
type devKeyFile struct {
	SchemaVersion string `json:"schema_version"`
	ID            string `json:"id"`
	Algo          string `json:"algo"`
	Pubkey        string `json:"pubkey"`
	PrivateKey    string `json:"private_key"`
}

// TrustRoots are the dev signer's genesis trust roots: itself, 1 of 1.
func (d *DevSigner) TrustRoots() descriptor.TrustRoots {
	pub := d.Key.Public().(ed25519.PublicKey)
	return descriptor.TrustRoots{
		Signers: []descriptor.Signer{{ID: d.ID, Algo: descriptor.AlgoEd25519, Pubkey: pub,
			PubkeyB64: base64.StdEncoding.EncodeToString(pub)}},
		Quorum: descriptor.Quorum{M: 1, N: 1},
	}
}

// ObtainDevSigner returns a fresh in-memory dev signer (amnesia) or the
// one in DevSignerPath, created durably when missing.
func ObtainDevSigner(spec Spec) (*DevSigner, error) {
	if spec.Amnesia {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("registry: dev signer: %w", err)
		}
		return &DevSigner{ID: DevSignerID, Key: priv}, nil
	}
	path := DevSignerPath(spec.DataDir)
	d, err := ReadDevSigner(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createDevSigner(path); err != nil {
			return nil, err
		}
		d, err = ReadDevSigner(path)
	}
	return d, err
}

// ReadDevSigner reads and checks a dev signer key file.
func ReadDevSigner(path string) (*DevSigner, error) {
	raw, err := readSmallFile(path, maxDevKeyFile)
	if err != nil {
		return nil, fmt.Errorf("registry: dev signer key: %w", err)
	}
	var f devKeyFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("registry: dev signer key %s: %w", path, err)
	}
	seed, err := base64.StdEncoding.DecodeString(f.PrivateKey)
	if err != nil || len(seed) != ed25519.SeedSize || f.Algo != descriptor.AlgoEd25519 || !descriptor.IsSignerID(f.ID) {
		return nil, fmt.Errorf("registry: dev signer key %s: not an ed25519 key file", path)
	}
	key := ed25519.NewKeyFromSeed(seed)
	if base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey)) != f.Pubkey {
		return nil, fmt.Errorf("registry: dev signer key %s: pubkey does not match private_key", path)
	}
	return &DevSigner{ID: f.ID, Key: key, Path: path}, nil
}

// createDevSigner publishes a fresh dev signer key unless another process
// already did: directory 0700, file 0600, temp file + fsync + rename
// without replacing + fsync of the directory.
func createDevSigner(path string) error {
	dir := filepath.Dir(path)
	if err := ensureDir(dir); err != nil {
		return err
	}
	if err := durable.SyncDir(filepath.Dir(dir)); err != nil {
		return fmt.Errorf("registry: sync %s: %w", filepath.Dir(dir), err)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("registry: dev signer: %w", err)
	}
	raw, err := json.MarshalIndent(devKeyFile{SchemaVersion: "1.0.0", ID: DevSignerID, Algo: descriptor.AlgoEd25519,
		Pubkey: base64.StdEncoding.EncodeToString(pub), PrivateKey: base64.StdEncoding.EncodeToString(priv.Seed())}, "", "  ")
	if err != nil {
		return err
	}
	suffix := make([]byte, 8)
	_, _ = rand.Read(suffix) // crypto/rand.Read never fails (Go 1.24+)
	tmp := path + ".tmp-" + hex.EncodeToString(suffix)
	if err := durable.WriteFileSync(tmp, append(raw, '\n'), 0o600); err != nil {
		return fmt.Errorf("registry: write dev signer key: %w", err)
	}
	defer os.Remove(tmp)
	if err := durable.RenameNoReplace(tmp, path); err != nil && !errors.Is(err, durable.ErrExists) {
		return fmt.Errorf("registry: publish dev signer key: %w", err)
	}
	if err := durable.SyncDir(dir); err != nil {
		return fmt.Errorf("registry: sync %s: %w", dir, err)
	}
	return nil
}
