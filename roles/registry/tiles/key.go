package tiles

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"
)

// algEd25519 is the signed-note algorithm byte of Ed25519 keys.
const algEd25519 = 0x01

// LogKey is the log's Ed25519 signed-note key. Its name is the log's origin.
// It is immutable and safe for concurrent use.
type LogKey struct {
	origin   string
	pub      ed25519.PublicKey
	seed     []byte
	signer   note.Signer
	verifier note.Verifier
	vkey     string
}

// NewLogKey returns a fresh random key for origin (amnesia mode, tests). An
// empty origin means DefaultOrigin of the new key; any other origin must pass
// CheckOrigin.
func NewLogKey(origin string) (*LogKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("tiles: generate log key: %w", err)
	}
	if origin == "" {
		origin = DefaultOrigin(pub)
	}
	return newLogKey(origin, priv.Seed())
}

// ParseLogKey parses a note signer key "PRIVATE+KEY+<name>+<8 hex key
// ID>+<base64(0x01‖32-byte seed)>" (the content of the log key file). The
// name must pass CheckOrigin and the key ID must match; errors wrap ErrBadKey
// or ErrBadOrigin.
func ParseLogKey(skey string) (*LogKey, error) {
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 || parts[0] != "PRIVATE" || parts[1] != "KEY" || len(parts[3]) != 8 {
		return nil, fmt.Errorf("%w: not PRIVATE+KEY+<name>+<id>+<key>", ErrBadKey)
	}
	name, id := parts[2], parts[3]
	raw, ok := decodeBase64(parts[4])
	if !ok || len(raw) != 1+ed25519.SeedSize || raw[0] != algEd25519 {
		return nil, fmt.Errorf("%w: key is not base64 of 0x01 and a 32-byte Ed25519 seed", ErrBadKey)
	}
	k, err := newLogKey(name, raw[1:])
	if err != nil {
		return nil, err
	}
	if want := fmt.Sprintf("%08x", k.KeyID()); id != want {
		return nil, fmt.Errorf("%w: key ID %s, want %s", ErrBadKey, id, want)
	}
	return k, nil
}

// newLogKey builds a key from its name and Ed25519 seed. The signer and
// verifier come from x/mod's parsers of the encoded keys, which re-check the
// key IDs computed here.
func newLogKey(origin string, seed []byte) (*LogKey, error) {
	if err := CheckOrigin(origin); err != nil {
		return nil, err
	}
	priv := ed25519.NewKeyFromSeed(seed)
	k := &LogKey{origin: origin, pub: priv.Public().(ed25519.PublicKey), seed: append([]byte(nil), seed...)}
	k.vkey = formatVerifierKey(origin, k.pub)
	var err error
	if k.signer, err = note.NewSigner(k.signerKey()); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadKey, err)
	}
	if k.verifier, err = note.NewVerifier(k.vkey); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadKey, err)
	}
	return k, nil
}

// DefaultOrigin is the origin of a log whose operator set none:
// "ron-registry/" + hex of the first 8 bytes of SHA-256(pub).
func DefaultOrigin(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "ron-registry/" + hex.EncodeToString(sum[:8])
}

// CheckOrigin validates an origin, which is also the note key name: it must
// be non-empty UTF-8 with no whitespace, no control characters and no '+'.
// Errors wrap ErrBadOrigin.
func CheckOrigin(o string) error {
	switch {
	case o == "":
		return fmt.Errorf("%w: empty", ErrBadOrigin)
	case !utf8.ValidString(o):
		return fmt.Errorf("%w: %q is not UTF-8", ErrBadOrigin, o)
	case strings.ContainsRune(o, '+'):
		return fmt.Errorf("%w: %q contains '+'", ErrBadOrigin, o)
	case strings.IndexFunc(o, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return fmt.Errorf("%w: %q contains whitespace or a control character", ErrBadOrigin, o)
	}
	return nil
}

// decodeBase64 decodes canonical padded standard base64 only (the decoder
// alone would skip '\r' and '\n' and accept non-zero padding bits).
func decodeBase64(s string) ([]byte, bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	return b, err == nil && base64.StdEncoding.EncodeToString(b) == s
}

// keyID is the signed-note key ID: the first 4 bytes (big-endian) of
// SHA-256(name ‖ 0x0A ‖ 0x01 ‖ pubkey).
func keyID(name string, pub ed25519.PublicKey) uint32 {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{'\n', algEd25519})
	h.Write(pub)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// formatVerifierKey encodes "<name>+<8 hex key ID>+<base64(0x01‖pubkey)>".
func formatVerifierKey(name string, pub ed25519.PublicKey) string {
	b64 := base64.StdEncoding.EncodeToString(append([]byte{algEd25519}, pub...))
	return name + "+" + fmt.Sprintf("%08x", keyID(name, pub)) + "+" + b64
}

// signerKey encodes the private key as x/mod's note signer key.
func (k *LogKey) signerKey() string {
	b64 := base64.StdEncoding.EncodeToString(append([]byte{algEd25519}, k.seed...))
	return "PRIVATE+KEY+" + k.origin + "+" + fmt.Sprintf("%08x", k.KeyID()) + "+" + b64
}

// Origin returns the key name, which is the log's checkpoint origin.
func (k *LogKey) Origin() string { return k.origin }

// PublicKey returns the Ed25519 public key (do not modify).
func (k *LogKey) PublicKey() ed25519.PublicKey { return k.pub }

// KeyID returns the signed-note key ID of this key.
func (k *LogKey) KeyID() uint32 { return keyID(k.origin, k.pub) }

// VerifierKey returns the note verifier key served at /registry/log/key:
// "<origin>+<8 hex key ID>+<base64(0x01‖pubkey)>"; note.NewVerifier accepts
// it.
func (k *LogKey) VerifierKey() string { return k.vkey }

// Signer returns the note signer for this key.
func (k *LogKey) Signer() note.Signer { return k.signer }

// Verifier returns the note verifier for this key.
func (k *LogKey) Verifier() note.Verifier { return k.verifier }

// String returns the verifier key; the private key is never printed.
func (k *LogKey) String() string { return k.vkey }
