package descriptor

import (
	"bytes"
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/gowebpki/jcs"
	"github.com/zeebo/blake3"
)

// ZeroHash is genesis's prev_hash: "b3:" and 64 zeros.
const ZeroHash = "b3:0000000000000000000000000000000000000000000000000000000000000000"

// SigningPrefix is the domain separator every approval signature starts with.
const SigningPrefix = "ron:svc-registry:v1\n"

// SigningMessageLen is the length of SigningMessage for a well-formed
// payload_b3: 20 prefix bytes and 67 of payload_b3.
const SigningMessageLen = len(SigningPrefix) + len(ZeroHash)

var b3Re = regexp.MustCompile(`^b3:[0-9a-f]{64}$`)

// PayloadB3 returns "b3:" + lowercase hex of BLAKE3-256(canonical). The
// caller passes the JCS bytes; PayloadB3 does not canonicalise.
func PayloadB3(canonical []byte) string {
	sum := blake3.Sum256(canonical)
	return "b3:" + hex.EncodeToString(sum[:])
}

// SigningMessage returns the bytes an approval signs: the ASCII
// SigningPrefix followed by payloadB3 (87 bytes for a valid payload_b3).
func SigningMessage(payloadB3 string) []byte {
	return []byte(SigningPrefix + payloadB3)
}

// IsB3 reports whether s is a canonical payload_b3: "b3:" and 64 lowercase
// hex digits.
func IsB3(s string) bool { return b3Re.MatchString(s) }

// Canonicalize returns the RFC 8785 form of raw. Anything jcs.Transform
// refuses (not JSON, invalid UTF-8, trailing data, duplicate keys, lone
// surrogates, non-finite numbers) is 400 malformed with reason "syntax".
func Canonicalize(raw []byte) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, malformed(top(""), ReasonSyntax, "empty body")
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, malformed(top(""), ReasonSyntax, "invalid JSON: %s", clip(err.Error()))
	}
	return out, nil
}

// IsCanonical reports whether b is JSON in RFC 8785 canonical form, that is
// jcs.Transform(b) succeeds and returns b byte for byte. It says nothing
// about the descriptor rules.
func IsCanonical(b []byte) bool {
	out, err := jcs.Transform(b)
	return err == nil && bytes.Equal(out, b)
}

// clip bounds untrusted text copied into error messages.
func clip(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
