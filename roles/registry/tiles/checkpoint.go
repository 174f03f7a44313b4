package tiles

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// Checkpoint is a signed C2SP tlog-checkpoint: the tree of Size leaves has
// root Root, and Note is the signed note text. Note is shared: do not modify
// it.
type Checkpoint struct {
	Size uint64
	Root [32]byte
	Note []byte
}

// EmptyRoot is the root of the empty tree, SHA-256("").
var EmptyRoot = sha256.Sum256(nil)

// checkpointBody is the note text: origin, decimal size, base64 root, and no
// extension lines.
func checkpointBody(origin string, size uint64, root [32]byte) string {
	return origin + "\n" + strconv.FormatUint(size, 10) + "\n" + base64.StdEncoding.EncodeToString(root[:]) + "\n"
}

// signCheckpoint signs the checkpoint of a tree with the log key.
func signCheckpoint(k *LogKey, size uint64, root [32]byte) (Checkpoint, error) {
	msg, err := note.Sign(&note.Note{Text: checkpointBody(k.Origin(), size, root)}, k.Signer())
	if err != nil {
		return Checkpoint{}, fmt.Errorf("tiles: sign checkpoint: %w", err)
	}
	return Checkpoint{Size: size, Root: root, Note: msg}, nil
}

// ParseCheckpoint opens a signed checkpoint note: it needs a valid signature
// by v (other signatures, e.g. witness cosignatures, are ignored), an origin
// line equal to v.Name(), a canonical decimal size, a canonical base64
// 32-byte root, and no extension lines. Errors wrap ErrBadCheckpoint. The
// returned Note is a copy of msg.
func ParseCheckpoint(msg []byte, v note.Verifier) (Checkpoint, error) {
	if v == nil {
		return Checkpoint{}, fmt.Errorf("%w: no verifier", ErrBadCheckpoint)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %v", ErrBadCheckpoint, err)
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) != 4 || lines[3] != "" {
		return Checkpoint{}, fmt.Errorf("%w: want exactly origin, size and root lines", ErrBadCheckpoint)
	}
	if lines[0] != v.Name() {
		return Checkpoint{}, fmt.Errorf("%w: origin %q, want %q", ErrBadCheckpoint, lines[0], v.Name())
	}
	size, ok := parseCanonicalUint(lines[1])
	if !ok {
		return Checkpoint{}, fmt.Errorf("%w: size %q", ErrBadCheckpoint, lines[1])
	}
	root, ok := decodeBase64(lines[2])
	if !ok || len(root) != 32 {
		return Checkpoint{}, fmt.Errorf("%w: root %q", ErrBadCheckpoint, lines[2])
	}
	cp := Checkpoint{Size: size, Note: bytes.Clone(msg)}
	copy(cp.Root[:], root)
	return cp, nil
}

// parseCanonicalUint parses a decimal uint64 without sign or leading zeros.
func parseCanonicalUint(s string) (uint64, bool) {
	if s == "" || (len(s) > 1 && s[0] == '0') || !allDigits(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}
