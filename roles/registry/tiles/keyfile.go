package tiles

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ronhq/ron/store/durable"
)

// LogKeyFile is the log key's file name inside <data>/keys.
const LogKeyFile = "registry-log.key"

// maxKeyFile bounds how much of a key file is read.
const maxKeyFile = 1024

// LogKeyPath returns the log key file of a data directory:
// <dataDir>/keys/registry-log.key.
func LogKeyPath(dataDir string) string {
	return filepath.Join(dataDir, "keys", LogKeyFile)
}

// LoadOrCreateLogKey returns the log key kept in LogKeyPath(dataDir): the
// note signer key "PRIVATE+KEY+…" and a newline. A missing file is created
// durably (directory 0700, file 0600, temp file + fsync + rename without
// replacing + fsync of the directory), so concurrent first starts agree on
// one key; its name is origin, or DefaultOrigin of the new key when origin is
// empty. An existing key whose name differs from a non-empty origin wraps
// ErrOriginMismatch (the origin is fixed when the log is created); a
// malformed file wraps ErrBadKey.
func LoadOrCreateLogKey(dataDir, origin string) (*LogKey, error) {
	if origin != "" {
		if err := CheckOrigin(origin); err != nil {
			return nil, err
		}
	}
	k, err := readLogKey(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createLogKey(dataDir, origin); err != nil {
			return nil, err
		}
		k, err = readLogKey(dataDir)
	}
	if err != nil {
		return nil, err
	}
	if origin != "" && k.Origin() != origin {
		return nil, fmt.Errorf("%w: %s holds %q, configured %q", ErrOriginMismatch, LogKeyPath(dataDir), k.Origin(), origin)
	}
	return k, nil
}

// readLogKey reads and parses the key file; a missing file matches
// fs.ErrNotExist.
func readLogKey(dataDir string) (*LogKey, error) {
	path := LogKeyPath(dataDir)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tiles: log key: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("tiles: log key %s: %w", path, err)
	}
	if len(b) > maxKeyFile {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrBadKey, path, maxKeyFile)
	}
	k, err := ParseLogKey(strings.TrimSuffix(string(b), "\n"))
	if err != nil {
		return nil, fmt.Errorf("tiles: log key %s: %w", path, err)
	}
	return k, nil
}

// createLogKey publishes a fresh key unless another process already did.
func createLogKey(dataDir, origin string) error {
	dir := filepath.Dir(LogKeyPath(dataDir))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("tiles: create key dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("tiles: key dir mode: %w", err)
	}
	if err := durable.SyncDir(dataDir); err != nil { // the keys directory may be new
		return fmt.Errorf("tiles: sync %s: %w", dataDir, err)
	}
	k, err := NewLogKey(origin)
	if err != nil {
		return err
	}
	return writeLogKey(dataDir, k)
}

// writeLogKey publishes k's file unless one exists already (then it is
// left as it is).
func writeLogKey(dataDir string, k *LogKey) error {
	return publishLogKey(dataDir, k, func(tmp, path string) error {
		if err := durable.RenameNoReplace(tmp, path); err != nil && !errors.Is(err, durable.ErrExists) {
			return fmt.Errorf("tiles: publish log key: %w", err)
		}
		return nil
	})
}

// publishLogKey writes k to a temp file in the key folder (created 0700)
// with fsync, hands it to place (the rename onto the key file's path),
// removes what is left of the temp file and fsyncs the folder.
func publishLogKey(dataDir string, k *LogKey, place func(tmp, path string) error) error {
	dir := filepath.Dir(LogKeyPath(dataDir))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("tiles: create key dir: %w", err)
	}
	suffix := make([]byte, 8)
	_, _ = rand.Read(suffix) // crypto/rand.Read never fails (Go 1.24+)
	tmp := filepath.Join(dir, LogKeyFile+".tmp-"+hex.EncodeToString(suffix))
	if err := durable.WriteFileSync(tmp, []byte(k.signerKey()+"\n"), 0o600); err != nil {
		return fmt.Errorf("tiles: write log key: %w", err)
	}
	defer os.Remove(tmp)
	if err := place(tmp, LogKeyPath(dataDir)); err != nil {
		return err
	}
	if err := durable.SyncDir(dir); err != nil {
		return fmt.Errorf("tiles: sync %s: %w", dir, err)
	}
	return nil
}

// SignerKey returns the key's text as the key file holds it (without the
// newline): "PRIVATE+KEY+<origin>+<key ID>+<base64>". It is secret.
func (k *LogKey) SignerKey() string { return k.signerKey() }

// ReplaceLogKey makes k the key of dataDir's key file, replacing any key
// there (temp file + fsync + rename + fsync of the directory). Only a
// registry that never signed a leaf may do it: a replicated member that
// takes the log's key from its init entry (docs/cluster.md §14).
func ReplaceLogKey(dataDir string, k *LogKey) error {
	return publishLogKey(dataDir, k, func(tmp, path string) error {
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("tiles: replace log key: %w", err)
		}
		return nil
	})
}
