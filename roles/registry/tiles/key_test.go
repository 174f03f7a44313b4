package tiles

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/ronhq/ron/internal/fixtures"
)

type noteVectorFile struct {
	Keys []struct {
		Name  string  `json:"name"`
		KeyID string  `json:"key_id"`
		VKey  string  `json:"vkey"`
		SKey  *string `json:"skey"`
	} `json:"keys"`
	ValidNotes []struct {
		ID         string `json:"id"`
		Text       string `json:"text"`
		Signatures []struct {
			Name string `json:"name"`
		} `json:"signatures"`
		SignedMessage string   `json:"signed_message"`
		Verifiers     []string `json:"verifiers"`
	} `json:"valid_notes"`
	InvalidMessages []struct {
		Message    string   `json:"message"`
		MessageHex string   `json:"message_hex"`
		Verifiers  []string `json:"verifiers"`
		Why        string   `json:"why"`
	} `json:"invalid_messages"`
}

func loadNoteVectors(t *testing.T) noteVectorFile {
	t.Helper()
	b := fixtures.Read(t, "signed-note", "signed_note_vectors.json")
	var v noteVectorFile
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Keys) == 0 || len(v.ValidNotes) == 0 || len(v.InvalidMessages) == 0 {
		t.Fatal("empty vector file")
	}
	return v
}

// TestSignedNoteKeyVectors pins the key ID computation and the verifier and
// signer key encodings to the published vectors.
func TestSignedNoteKeyVectors(t *testing.T) {
	v := loadNoteVectors(t)
	signers := map[string]*LogKey{}
	for _, kv := range v.Keys {
		name, rest, _ := strings.Cut(kv.VKey, "+")
		_, b64, _ := strings.Cut(rest, "+")
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(raw) != 33 || raw[0] != 1 {
			t.Fatalf("%s: bad vkey in vectors", kv.Name)
		}
		pub := ed25519.PublicKey(raw[1:])
		if got := fmt.Sprintf("%08x", keyID(name, pub)); got != kv.KeyID {
			t.Errorf("%s: keyID = %s, want %s", kv.Name, got, kv.KeyID)
		}
		if got := formatVerifierKey(name, pub); got != kv.VKey {
			t.Errorf("%s: verifier key = %s, want %s", kv.Name, got, kv.VKey)
		}
		if kv.SKey == nil {
			continue
		}
		k, err := ParseLogKey(*kv.SKey)
		if err != nil {
			t.Fatalf("%s: ParseLogKey: %v", kv.Name, err)
		}
		if k.VerifierKey() != kv.VKey || k.signerKey() != *kv.SKey || k.Origin() != kv.Name {
			t.Errorf("%s: round trip gave %s / %s", kv.Name, k.VerifierKey(), k.signerKey())
		}
		signers[kv.Name] = k
	}
	for _, n := range v.ValidNotes {
		var ss []note.Signer
		for _, s := range n.Signatures {
			if k := signers[s.Name]; k != nil {
				ss = append(ss, k.Signer())
			}
		}
		if len(ss) != len(n.Signatures) {
			continue // no private key published
		}
		msg, err := note.Sign(&note.Note{Text: n.Text}, ss...)
		if err != nil || string(msg) != n.SignedMessage {
			t.Errorf("%s: signed %q, %v; want %q", n.ID, msg, err, n.SignedMessage)
		}
	}
}

func TestNewLogKey(t *testing.T) {
	k, err := NewLogKey("")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^ron-registry/[0-9a-f]{16}$`).MatchString(k.Origin()) || k.Origin() != DefaultOrigin(k.PublicKey()) {
		t.Fatalf("default origin %q", k.Origin())
	}
	sum := sha256.Sum256(k.PublicKey())
	if want := "ron-registry/" + hex.EncodeToString(sum[:8]); k.Origin() != want {
		t.Fatalf("origin %q, want %q", k.Origin(), want)
	}
	v, err := note.NewVerifier(k.VerifierKey())
	if err != nil || v.Name() != k.Origin() || v.KeyHash() != k.KeyID() {
		t.Fatalf("note.NewVerifier(%q) = %v, %v", k.VerifierKey(), v, err)
	}
	if k.Signer().KeyHash() != k.KeyID() || k.Verifier().KeyHash() != k.KeyID() {
		t.Fatal("signer/verifier key hash differ from KeyID")
	}
	if strings.Contains(k.String(), "PRIVATE") || fmt.Sprint(k) != k.VerifierKey() {
		t.Fatalf("String() = %q", k.String())
	}
	other, err := NewLogKey("")
	if err != nil || other.Origin() == k.Origin() {
		t.Fatalf("two fresh keys share origin %q (%v)", k.Origin(), err)
	}
	named, err := NewLogKey("registry.example.com/ron")
	if err != nil || named.Origin() != "registry.example.com/ron" || !strings.HasPrefix(named.VerifierKey(), "registry.example.com/ron+") {
		t.Fatalf("named key: %v, %v", named, err)
	}
}

func TestCheckOrigin(t *testing.T) {
	for _, ok := range []string{"ron-registry/0123456789abcdef", "registry.example.com/ron", "é", "a"} {
		if err := CheckOrigin(ok); err != nil {
			t.Errorf("CheckOrigin(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "a+b", "+", "a\tb", "a\nb", "a\x00b", "a\x7fb", "\xff", "a\u00a0b", "a\u2003b", "a\u0085b"} {
		if err := CheckOrigin(bad); !errors.Is(err, ErrBadOrigin) {
			t.Errorf("CheckOrigin(%q) = %v, want ErrBadOrigin", bad, err)
		}
		if bad == "" {
			continue // NewLogKey("") means the default origin
		}
		if _, err := NewLogKey(bad); !errors.Is(err, ErrBadOrigin) {
			t.Errorf("NewLogKey(%q) = %v, want ErrBadOrigin", bad, err)
		}
	}
}

func TestParseLogKeyBad(t *testing.T) {
	good, err := NewLogKey("o")
	if err != nil {
		t.Fatal(err)
	}
	sk := good.signerKey()
	parts := strings.SplitN(sk, "+", 5)
	seed := append([]byte{1}, good.seed...)
	enc := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	for _, tc := range []struct {
		name, skey string
		want       error
	}{
		{"empty", "", ErrBadKey},
		{"verifier key", good.VerifierKey(), ErrBadKey},
		{"no key", "PRIVATE+KEY+o+" + parts[3], ErrBadKey},
		{"public", "PUBLIC+KEY+o+" + parts[3] + "+" + parts[4], ErrBadKey},
		{"wrong id", "PRIVATE+KEY+o+00000000+" + parts[4], ErrBadKey},
		{"short id", "PRIVATE+KEY+o+" + parts[3][:7] + "+" + parts[4], ErrBadKey},
		{"bad base64", "PRIVATE+KEY+o+" + parts[3] + "+" + parts[4][:10] + "!", ErrBadKey},
		{"short seed", "PRIVATE+KEY+o+" + parts[3] + "+" + enc(seed[:32]), ErrBadKey},
		{"long seed", "PRIVATE+KEY+o+" + parts[3] + "+" + enc(append(seed, 0)), ErrBadKey},
		{"alg", "PRIVATE+KEY+o+" + parts[3] + "+" + enc(append([]byte{2}, seed[1:]...)), ErrBadKey},
		{"name space", "PRIVATE+KEY+a b+" + parts[3] + "+" + parts[4], ErrBadOrigin},
		{"trailing newline", sk + "\n", ErrBadKey},
	} {
		if _, err := ParseLogKey(tc.skey); !errors.Is(err, tc.want) {
			t.Errorf("%s: ParseLogKey = %v, want %v", tc.name, err, tc.want)
		}
	}
	if k, err := ParseLogKey(sk); err != nil || k.VerifierKey() != good.VerifierKey() {
		t.Fatalf("round trip: %v", err)
	}
}
