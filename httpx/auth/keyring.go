// Package auth implements ron's capability tokens (docs/architecture.md §6): macaroons
// minted from the node's root key, their verification, and the echo middleware
// that checks them.
//
// Root key file: <data_dir>/keys/root.key holds the 32-byte key as 64 lowercase
// hex characters followed by a newline. A file holding exactly 32 raw bytes is
// also accepted (an operator may provision one with head -c32 /dev/urandom).
// Anything else is rejected with ErrBadKey.
package auth

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/ronhq/ron/store/durable"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the length of a root key in bytes.
const KeySize = 32

// ErrBadKey is wrapped by errors about a root key file with the wrong size or
// encoding.
var ErrBadKey = errors.New("auth: malformed root key")

// Keyring holds a node's root key. It is immutable and safe for concurrent use.
type Keyring struct {
	key []byte
}

// NewKeyring returns a Keyring for a 32-byte key (copied). It is meant for tests
// and for keys obtained elsewhere; nodes use LoadOrCreateRootKey.
func NewKeyring(key []byte) (*Keyring, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrBadKey, len(key), KeySize)
	}
	return &Keyring{key: append([]byte(nil), key...)}, nil
}

// GenerateKeyring returns a Keyring with a fresh random key held in memory only.
func GenerateKeyring() (*Keyring, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("auth: generate root key: %w", err)
	}
	return &Keyring{key: key}, nil
}

// KeyPath returns the root key file path for a data directory.
func KeyPath(dataDir string) string {
	return filepath.Join(dataDir, "keys", "root.key")
}

// ReadRootKey reads the root key of dataDir without ever creating it (CLI use).
// A missing file yields an error satisfying errors.Is(err, fs.ErrNotExist), an
// unreadable one errors.Is(err, fs.ErrPermission), a malformed one ErrBadKey.
func ReadRootKey(dataDir string) (*Keyring, error) {
	return ReadKeyFile(KeyPath(dataDir))
}

// ReadNodeKey reads a node's root key without ever creating it (CLI use):
// keyFile when set (a shared cluster.root_key_file), else dataDir's
// keys/root.key. Errors as ReadKeyFile.
func ReadNodeKey(dataDir, keyFile string) (*Keyring, error) {
	if keyFile != "" {
		return ReadKeyFile(keyFile)
	}
	return ReadRootKey(dataDir)
}

// ReadKeyFile reads a root key file (32 raw bytes, or 64 hex characters
// with an optional trailing newline) without ever creating it: a node's
// <data>/keys/root.key or a shared cluster.root_key_file. A missing file
// yields an error satisfying errors.Is(err, fs.ErrNotExist), an unreadable
// one errors.Is(err, fs.ErrPermission), a malformed one ErrBadKey.
func ReadKeyFile(path string) (*Keyring, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: read root key: %w", err)
	}
	key, err := parseKey(data)
	if err != nil {
		return nil, fmt.Errorf("auth: %s: %w", path, err)
	}
	return &Keyring{key: key}, nil
}

// LoadOrCreateRootKey returns the node's root key. It reads <dataDir>/keys/root.key
// if present. Otherwise, unless amnesia is set, it creates the key durably
// (directory 0700, file 0600, temp file + fsync + link-without-replace + fsync of
// the directory), so that concurrent first starts all end up with the same key.
// With amnesia set, a missing key is generated in memory and nothing is written.
func LoadOrCreateRootKey(dataDir string, amnesia bool) (*Keyring, error) {
	k, err := ReadRootKey(dataDir)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	if amnesia {
		return GenerateKeyring()
	}
	if err := createRootKey(dataDir); err != nil {
		return nil, err
	}
	return ReadRootKey(dataDir)
}

// createRootKey publishes a fresh key unless another process already did.
func createRootKey(dataDir string) error {
	dir := filepath.Dir(KeyPath(dataDir))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("auth: create key dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("auth: key dir mode: %w", err)
	}
	if err := durable.SyncDir(dataDir); err != nil {
		return fmt.Errorf("auth: sync %s: %w", dataDir, err)
	}
	_ = durable.SyncDir(filepath.Dir(dataDir)) // best effort: dataDir itself may be new
	tmp, err := writeTempKey(dir)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	// The no-replace rename lets exactly one of concurrent creators win; the
	// others read the winner's key. The file is complete before it is renamed.
	if err := durable.RenameNoReplace(tmp, KeyPath(dataDir)); err != nil && !errors.Is(err, durable.ErrExists) {
		return fmt.Errorf("auth: publish root key: %w", err)
	}
	if err := durable.SyncDir(dir); err != nil {
		return fmt.Errorf("auth: sync %s: %w", dir, err)
	}
	return nil
}

// writeTempKey writes a new random key to an exclusive temp file in dir and
// fsyncs it. It returns the temp file's path.
func writeTempKey(dir string) (string, error) {
	k, err := GenerateKeyring()
	if err != nil {
		return "", err
	}
	suffix := make([]byte, 8)
	if _, err := rand.Read(suffix); err != nil {
		return "", fmt.Errorf("auth: temp name: %w", err)
	}
	path := filepath.Join(dir, "root.key.tmp-"+hex.EncodeToString(suffix))
	if err := durable.WriteFileSync(path, []byte(hex.EncodeToString(k.key)+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("auth: write temp key: %w", err)
	}
	return path, nil
}

// parseKey decodes a key file: 32 raw bytes, or 64 hex characters with an
// optional trailing newline.
func parseKey(data []byte) ([]byte, error) {
	if len(data) == KeySize {
		return append([]byte(nil), data...), nil
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	if len(s) != 2*KeySize {
		return nil, fmt.Errorf("%w: file is %d bytes, want %d hex characters or %d raw bytes",
			ErrBadKey, len(data), 2*KeySize, KeySize)
	}
	key, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: not hex", ErrBadKey)
	}
	return key, nil
}
