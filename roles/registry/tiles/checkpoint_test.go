package tiles

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

func TestCheckpointFormat(t *testing.T) {
	k, err := NewLogKey("registry.example.com/ron")
	if err != nil {
		t.Fatal(err)
	}
	root := [32]byte{1, 2, 3}
	cp, err := signCheckpoint(k, 42, root)
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(k.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open(cp.Note, note.VerifierList(v))
	if err != nil {
		t.Fatal(err)
	}
	wantText := "registry.example.com/ron\n42\n" + base64.StdEncoding.EncodeToString(root[:]) + "\n"
	if n.Text != wantText || len(n.Sigs) != 1 || n.Sigs[0].Name != k.Origin() || n.Sigs[0].Hash != k.KeyID() {
		t.Fatalf("note %q sigs %+v", n.Text, n.Sigs)
	}
	// The signature line: "— <name> base64(key ID ‖ 64-byte Ed25519 signature)".
	sigLine := strings.TrimPrefix(string(cp.Note), wantText+"\n")
	name, b64, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(sigLine, "— "), "\n"), " ")
	raw, err := base64.StdEncoding.DecodeString(b64)
	if name != k.Origin() || err != nil || len(raw) != 68 || binary.BigEndian.Uint32(raw) != k.KeyID() {
		t.Fatalf("signature line %q", sigLine)
	}
	got, err := ParseCheckpoint(cp.Note, k.Verifier())
	if err != nil || got.Size != 42 || got.Root != root || !bytes.Equal(got.Note, cp.Note) {
		t.Fatalf("ParseCheckpoint = %+v, %v", got, err)
	}
	if hex.EncodeToString(EmptyRoot[:]) != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatal("EmptyRoot is not SHA-256 of nothing")
	}
}

func TestParseCheckpointBad(t *testing.T) {
	k, err := NewLogKey("o")
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewLogKey("o")
	if err != nil {
		t.Fatal(err)
	}
	root := base64.StdEncoding.EncodeToString(make([]byte, 32))
	sign := func(key *LogKey, text string) []byte {
		msg, err := note.Sign(&note.Note{Text: text}, key.Signer())
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	good := sign(k, "o\n1\n"+root+"\n")
	if _, err := ParseCheckpoint(good, k.Verifier()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		msg  []byte
	}{
		{"other key", sign(other, "o\n1\n"+root+"\n")},
		{"extension line", sign(k, "o\n1\n"+root+"\nextra\n")},
		{"two lines", sign(k, "o\n1\n")},
		{"origin", sign(k, "p\n1\n"+root+"\n")},
		{"leading zero", sign(k, "o\n01\n"+root+"\n")},
		{"plus", sign(k, "o\n+1\n"+root+"\n")},
		{"negative", sign(k, "o\n-1\n"+root+"\n")},
		{"empty size", sign(k, "o\n\n"+root+"\n")},
		{"overflow", sign(k, "o\n18446744073709551616\n"+root+"\n")},
		{"hex root", sign(k, "o\n1\n"+strings.Repeat("00", 32)+"\n")},
		{"short root", sign(k, "o\n1\n"+base64.StdEncoding.EncodeToString(make([]byte, 31))+"\n")},
		{"unpadded root", sign(k, "o\n1\n"+strings.TrimRight(root, "=")+"\n")},
		{"padding bits", sign(k, "o\n1\n"+root[:42]+"B=\n")},
		{"tampered", bytes.Replace(good, []byte("\n1\n"), []byte("\n2\n"), 1)},
		{"unsigned", []byte("o\n1\n" + root + "\n")},
		{"empty", nil},
	} {
		if _, err := ParseCheckpoint(tc.msg, k.Verifier()); !errors.Is(err, ErrBadCheckpoint) {
			t.Errorf("%s: got %v, want ErrBadCheckpoint", tc.name, err)
		}
	}
	if _, err := ParseCheckpoint(good, nil); !errors.Is(err, ErrBadCheckpoint) {
		t.Errorf("nil verifier: %v", err)
	}
	// A cosignature by another key is ignored.
	cosigned, err := note.Sign(&note.Note{Text: "o\n1\n" + root + "\n"}, k.Signer(), other.Signer())
	if err != nil {
		t.Fatal(err)
	}
	if cp, err := ParseCheckpoint(cosigned, k.Verifier()); err != nil || cp.Size != 1 {
		t.Errorf("cosigned: %+v, %v", cp, err)
	}
}

// TestParseCheckpointNoteVectors: every malformed signed-note vector is
// refused, and the valid ones are refused as checkpoints (their text is not
// a checkpoint body).
func TestParseCheckpointNoteVectors(t *testing.T) {
	v := loadNoteVectors(t)
	verifier := func(vkey string) note.Verifier {
		nv, err := note.NewVerifier(vkey)
		if err != nil {
			t.Fatal(err)
		}
		return nv
	}
	for _, m := range v.InvalidMessages {
		msg := []byte(m.Message)
		if m.MessageHex != "" {
			var err error
			if msg, err = hex.DecodeString(m.MessageHex); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := ParseCheckpoint(msg, verifier(m.Verifiers[0])); !errors.Is(err, ErrBadCheckpoint) {
			t.Errorf("%s: got %v, want ErrBadCheckpoint", m.Why, err)
		}
	}
	for _, n := range v.ValidNotes {
		if _, err := ParseCheckpoint([]byte(n.SignedMessage), verifier(n.Verifiers[0])); !errors.Is(err, ErrBadCheckpoint) {
			t.Errorf("%s: got %v, want ErrBadCheckpoint", n.ID, err)
		}
	}
}

// fuzzKey is a fixed key (seed 32 × 0x2a) so the fuzz corpus stays valid.
func fuzzKey(f *testing.F) *LogKey {
	k, err := newLogKey("fuzz.example/log", bytes.Repeat([]byte{0x2a}, 32))
	if err != nil {
		f.Fatal(err)
	}
	return k
}

func FuzzParseCheckpoint(f *testing.F) {
	k := fuzzKey(f)
	for _, size := range []uint64{0, 1, 1 << 40} {
		cp, err := signCheckpoint(k, size, [32]byte{byte(size)})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(cp.Note)
	}
	f.Add([]byte("fuzz.example/log\n1\nAAAA\n\n— fuzz.example/log AAAAAAAA\n"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		cp, err := ParseCheckpoint(msg, k.Verifier())
		if err != nil {
			if !errors.Is(err, ErrBadCheckpoint) {
				t.Fatalf("error %v does not wrap ErrBadCheckpoint", err)
			}
			return
		}
		body := checkpointBody(k.Origin(), cp.Size, cp.Root)
		if !bytes.HasPrefix(msg, []byte(body+"\n")) || !bytes.Equal(cp.Note, msg) {
			t.Fatalf("accepted %q, which is not the canonical body %q", msg, body)
		}
	})
}
