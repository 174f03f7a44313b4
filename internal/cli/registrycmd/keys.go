package registrycmd

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// signerKeyFile is the key file `ron registry keygen` writes and `ron
// registry approve --key` reads (the dev signer key has the same shape):
// private_key is the std base64 of the 32-byte Ed25519 seed.
type signerKeyFile struct {
	SchemaVersion string `json:"schema_version"`
	ID            string `json:"id"`
	Algo          string `json:"algo"`
	Pubkey        string `json:"pubkey"`
	PrivateKey    string `json:"private_key"`
}

// signerItem is the DescriptorSet signer item of a key.
type signerItem struct {
	Kind   string `json:"kind"`
	ID     string `json:"id"`
	Algo   string `json:"algo"`
	Pubkey string `json:"pubkey"`
}

// maxKeyFile bounds how much of a key file is read.
const maxKeyFile = 4096

// newSignerKey returns a fresh key file for id.
func newSignerKey(id string) (signerKeyFile, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return signerKeyFile{}, err
	}
	return signerKeyFile{SchemaVersion: "1.0.0", ID: id, Algo: descriptor.AlgoEd25519,
		Pubkey: base64.StdEncoding.EncodeToString(pub), PrivateKey: base64.StdEncoding.EncodeToString(priv.Seed())}, nil
}

// writeNewKeyFile creates path (0600) with k, refusing to overwrite any
// existing file, and syncs it.
func writeNewKeyFile(path string, k signerKeyFile) error {
	raw, err := json.MarshalIndent(k, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return failed("conflict", fmt.Errorf("%s exists: keygen never overwrites a key file", path))
	}
	if err != nil {
		return err
	}
	_, err = f.Write(append(raw, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
	}
	return err
}

// readSignerKey reads and checks a key file: a valid signer id, algo
// ed25519, a 32-byte seed whose public key is pubkey.
func readSignerKey(path string) (string, ed25519.PrivateKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, usage(fmt.Errorf("signer key: %w", err))
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil || len(raw) > maxKeyFile {
		return "", nil, usage(fmt.Errorf("signer key %s: unreadable or larger than %d bytes", path, maxKeyFile))
	}
	var k signerKeyFile
	if err := json.Unmarshal(raw, &k); err != nil {
		return "", nil, usage(fmt.Errorf("signer key %s: %w", path, err))
	}
	seed, err := base64.StdEncoding.Strict().DecodeString(k.PrivateKey)
	if err != nil || len(seed) != ed25519.SeedSize || k.Algo != descriptor.AlgoEd25519 || !descriptor.IsSignerID(k.ID) {
		return "", nil, usage(fmt.Errorf("signer key %s: not an ed25519 signer key file", path))
	}
	key := ed25519.NewKeyFromSeed(seed)
	if base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey)) != k.Pubkey {
		return "", nil, usage(fmt.Errorf("signer key %s: pubkey does not match private_key", path))
	}
	return k.ID, key, nil
}

func keygenCommand() *cobra.Command {
	var id, out, output string
	cmd := &cobra.Command{
		Use:   "keygen --id ID --out FILE",
		Short: "Create a signer key file (0600, never overwrites) and print its signer item",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return report(cmd, err)
			}
			if !descriptor.IsSignerID(id) {
				return report(cmd, usage(fmt.Errorf("--id %q is not a signer id (org:<name>#<key>)", id)))
			}
			if out == "" {
				return report(cmd, usage(errors.New("--out FILE is required")))
			}
			k, err := newSignerKey(id)
			if err == nil {
				err = writeNewKeyFile(out, k)
			}
			if err != nil {
				return report(cmd, err)
			}
			item := signerItem{Kind: "signer", ID: k.ID, Algo: k.Algo, Pubkey: k.Pubkey}
			return report(cmd, printJSON(cmd.OutOrStdout(), item, output == "json"))
		},
	}
	cmd.Flags().StringVar(&id, "id", "", "signer id, e.g. org:example#k1")
	cmd.Flags().StringVar(&out, "out", "", "key file to create")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
