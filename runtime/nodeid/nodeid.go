// Package nodeid gives a ron node its identity (docs/storage.md §5): a ULID
// kept in <data_dir>/node.id, created durably on first use, or a fresh one
// per process in amnesia mode.
package nodeid

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

	"github.com/oklog/ulid/v2"

	"github.com/ronhq/ron/store/durable"
)

// FileName is the node id file's name inside the data directory.
const FileName = "node.id"

// maxFile bounds how much of a node id file is read: a ULID and a newline.
const maxFile = 64

// ErrCorrupt is wrapped by the error about a node id file that does not
// hold one canonical ULID.
var ErrCorrupt = errors.New("not a node id")

// Path returns the node id file of dataDir.
func Path(dataDir string) string { return filepath.Join(dataDir, FileName) }

// Load returns the node id of dataDir: the ULID in <dataDir>/node.id,
// created (temp file, fsync, rename without replacing, fsync of the
// directory) when the file does not exist, so concurrent first starts agree
// on one id. A file that cannot be read or does not hold exactly one
// canonical ULID is an error naming it. With amnesia a new ULID is returned
// and nothing is read or written.
func Load(dataDir string, amnesia bool) (string, error) {
	if amnesia {
		return ulid.Make().String(), nil
	}
	id, err := read(dataDir)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return id, err
	}
	if err := create(dataDir); err != nil {
		return "", err
	}
	return read(dataDir)
}

// Parse validates the content of a node id file: 26 uppercase Crockford
// base32 characters forming a valid ULID, optionally followed by one "\n".
// It returns the id.
func Parse(b []byte) (string, error) {
	s := strings.TrimSuffix(string(b), "\n")
	id, err := ulid.ParseStrict(s)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if id.String() != s {
		return "", fmt.Errorf("%w: not in canonical (uppercase) form", ErrCorrupt)
	}
	return s, nil
}

func read(dataDir string) (string, error) {
	path := Path(dataDir)
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("node id file %s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return "", fmt.Errorf("node id file %s: %w", path, err)
	}
	id, err := Parse(b)
	if err != nil {
		return "", fmt.Errorf("node id file %s: %w", path, err)
	}
	return id, nil
}

// create publishes a fresh id unless another process already did.
func create(dataDir string) error {
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return fmt.Errorf("node id: create %s: %w", dataDir, err)
	}
	suffix := make([]byte, 8)
	_, _ = rand.Read(suffix) // crypto/rand.Read never fails (Go 1.24+)
	tmp := Path(dataDir) + ".tmp-" + hex.EncodeToString(suffix)
	if err := durable.WriteFileSync(tmp, []byte(ulid.Make().String()+"\n"), 0o644); err != nil {
		return fmt.Errorf("node id: write %s: %w", tmp, err)
	}
	defer os.Remove(tmp)
	if err := durable.RenameNoReplace(tmp, Path(dataDir)); err != nil && !errors.Is(err, durable.ErrExists) {
		return fmt.Errorf("node id: publish %s: %w", Path(dataDir), err)
	}
	if err := durable.SyncDir(dataDir); err != nil {
		return fmt.Errorf("node id: sync %s: %w", dataDir, err)
	}
	return nil
}
