package verify

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Checkpoint is an opened C2SP tlog-checkpoint: the tree of Size leaves
// has root Root, and Origin is its first line (the log key's name).
type Checkpoint struct {
	Origin string
	Size   uint64
	Root   tlog.Hash
}

// ParseCheckpoint opens a signed checkpoint note with v and parses its
// body, which must be exactly three lines: the origin (equal to v.Name()),
// the tree size in canonical decimal (at most 2^63−1, tlog's limit) and the
// root in canonical std base64 of 32 bytes. Other signatures on the note
// (witness cosignatures) are ignored. A signature v rejects, or a note v
// did not sign, or a note that does not parse as a signed note at all, is
// a Mismatch of CheckCheckpointSig; a malformed body one of
// CheckCheckpoint.
func ParseCheckpoint(msg []byte, v note.Verifier) (Checkpoint, error) {
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, mismatch(CheckCheckpointSig, "%v", err)
	}
	return parseCheckpointText(n.Text, v.Name())
}

// parseCheckpointText parses the verified note text.
func parseCheckpointText(text, origin string) (Checkpoint, error) {
	lines := strings.Split(text, "\n")
	if len(lines) != 4 || lines[3] != "" {
		return Checkpoint{}, mismatch(CheckCheckpoint, "want exactly the origin, size and root lines")
	}
	if lines[0] != origin {
		return Checkpoint{}, mismatch(CheckCheckpoint, "origin %q, want the key name %q", lines[0], origin)
	}
	size, ok := parseDecimal(lines[1])
	if !ok || size > 1<<63-1 {
		return Checkpoint{}, mismatch(CheckCheckpoint, "size %q is not a canonical decimal", lines[1])
	}
	root, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		return Checkpoint{}, mismatch(CheckCheckpoint, "root %q is not base64 of 32 bytes", lines[2])
	}
	cp := Checkpoint{Origin: lines[0], Size: size}
	copy(cp.Root[:], root)
	return cp, nil
}

// parseDecimal parses a canonical decimal uint64: digits only, no sign,
// no leading zeros.
func parseDecimal(s string) (uint64, bool) {
	if s == "" || len(s) > 20 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// verifier returns the pinned note verifier (a key or a file holding one)
// or, when none is pinned, the key the server publishes, with unpinned set.
func (f *fetcher) verifier(ctx context.Context, pinned string) (v note.Verifier, unpinned bool, err error) {
	if pinned == "" {
		body, err := f.get(ctx, "/registry/log/key", maxSmall)
		if err != nil {
			return nil, false, err
		}
		v, err := note.NewVerifier(strings.TrimSpace(string(body)))
		if err != nil {
			return nil, false, mismatch(CheckCheckpoint, "served log key: %v", err)
		}
		return v, true, nil
	}
	v, err = ParseLogKey(pinned)
	return v, false, err
}

// ParseLogKey accepts a note verifier key ("<name>+<8 hex>+<base64>") or
// the path of a file whose content (surrounding space trimmed) is one.
// Errors wrap ErrOptions.
func ParseLogKey(s string) (note.Verifier, error) {
	if v, err := note.NewVerifier(strings.TrimSpace(s)); err == nil {
		return v, nil
	}
	data, err := os.ReadFile(s)
	if err != nil {
		return nil, fmt.Errorf("%w: --log-key is neither a verifier key nor a readable file: %v", ErrOptions, err)
	}
	v, err := note.NewVerifier(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: log key file %s: %v", ErrOptions, s, err)
	}
	return v, nil
}
