package verify

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/ronhq/ron/roles/registry/tiles"
)

// testNoteKey is a fixed note key for checkpoint parser tests.
func testNoteKey(t testing.TB) (note.Signer, note.Verifier) {
	t.Helper()
	k, err := tiles.NewLogKey("example.com/log")
	if err != nil {
		t.Fatal(err)
	}
	return k.Signer(), k.Verifier()
}

func TestParseCheckpointBodies(t *testing.T) {
	s, v := testNoteKey(t)
	root := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	for _, tc := range []struct {
		text  string
		check string // "" accepted
	}{
		{"example.com/log\n12\n" + root + "\n", ""},
		{"example.com/log\n0\n" + root + "\n", ""},
		{"example.com/log\n9223372036854775807\n" + root + "\n", ""},
		{"example.com/log\n9223372036854775808\n" + root + "\n", CheckCheckpoint},
		{"example.com/log\n012\n" + root + "\n", CheckCheckpoint},
		{"example.com/log\n+12\n" + root + "\n", CheckCheckpoint},
		{"example.com/log\n-1\n" + root + "\n", CheckCheckpoint},
		{"example.com/log\n1 \n" + root + "\n", CheckCheckpoint},
		{"example.com/log\n\n" + root + "\n", CheckCheckpoint},
		{"other.example/log\n12\n" + root + "\n", CheckCheckpoint},
		{"example.com/log\n12\n" + root[:40] + "\n", CheckCheckpoint},
		{"example.com/log\n12\n" + strings.TrimRight(root, "=") + "\n", CheckCheckpoint},
		{"example.com/log\n12\n" + base64.StdEncoding.EncodeToString(make([]byte, 33)) + "\n", CheckCheckpoint},
		{"example.com/log\n12\n" + root + "\nextension\n", CheckCheckpoint},
		{"example.com/log\n12\n", CheckCheckpoint},
	} {
		msg, err := note.Sign(&note.Note{Text: tc.text}, s)
		if err != nil {
			t.Fatalf("%q: sign: %v", tc.text, err)
		}
		cp, err := ParseCheckpoint(msg, v)
		if tc.check == "" {
			if err != nil || cp.Origin != "example.com/log" || cp.Root.String() != root {
				t.Errorf("%q: %+v %v", tc.text, cp, err)
			}
			continue
		}
		var m *Mismatch
		if !errors.As(err, &m) || m.Check != tc.check {
			t.Errorf("%q: %v, want a %s mismatch", tc.text, err, tc.check)
		}
	}
}

func TestParseCheckpointSignatures(t *testing.T) {
	s, v := testNoteKey(t)
	other, err := tiles.NewLogKey("example.com/log")
	if err != nil {
		t.Fatal(err)
	}
	text := "example.com/log\n1\n" + base64.StdEncoding.EncodeToString(make([]byte, 32)) + "\n"
	good, _ := note.Sign(&note.Note{Text: text}, s)
	byOther, _ := note.Sign(&note.Note{Text: text}, other.Signer())
	both, _ := note.Sign(&note.Note{Text: text}, s, mustSigner(t, "witness.example"))
	if _, err := ParseCheckpoint(both, v); err != nil {
		t.Fatalf("cosigned checkpoint: %v", err)
	}
	for name, msg := range map[string][]byte{
		"other key":    byOther,
		"no signature": []byte(text + "\n"),
		"text edited":  bytes.Replace(good, []byte("\n1\n"), []byte("\n2\n"), 1),
		"garbage":      []byte("not a note"),
	} {
		var m *Mismatch
		if _, err := ParseCheckpoint(msg, v); !errors.As(err, &m) || m.Check != CheckCheckpointSig {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func mustSigner(t testing.TB, name string) note.Signer {
	t.Helper()
	k, err := tiles.NewLogKey(name)
	if err != nil {
		t.Fatal(err)
	}
	return k.Signer()
}

// FuzzParseCheckpoint: any body, signed or not, never panics; an
// accepted one re-formats to exactly the signed text.
func FuzzParseCheckpoint(f *testing.F) {
	s, v := testNoteKey(f)
	root := base64.StdEncoding.EncodeToString(make([]byte, 32))
	for _, seed := range []string{
		"example.com/log\n1\n" + root + "\n", "example.com/log\n0\n" + root + "\n",
		"example.com/log\n01\n" + root + "\n", "example.com/log\n1\n" + root + "\nx\n", "", "\n\n\n",
	} {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, text string, sign bool) {
		msg := []byte(text)
		if sign {
			signed, err := note.Sign(&note.Note{Text: text}, s)
			if err != nil {
				return
			}
			msg = signed
		}
		cp, err := ParseCheckpoint(msg, v)
		if err != nil {
			return
		}
		want := cp.Origin + "\n" + strconv.FormatUint(cp.Size, 10) + "\n" + cp.Root.String() + "\n"
		n, oerr := note.Open(msg, note.VerifierList(v))
		if oerr != nil || n.Text != want {
			t.Fatalf("accepted %q: re-formats to %q (%v)", msg, want, oerr)
		}
	})
}

func TestParseDecimal(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "7": true, "10": true, "18446744073709551615": true,
		"": false, "00": false, "01": false, "-1": false, "+1": false, "1e3": false, " 1": false,
		"18446744073709551616": false, "１": false,
	} {
		if _, ok := parseDecimal(s); ok != want {
			t.Errorf("parseDecimal(%q) ok=%v, want %v", s, ok, want)
		}
	}
}

func TestParseBundle(t *testing.T) {
	one := []byte{0, 3, 'a', 'b', 'c'}
	for _, tc := range []struct {
		in   []byte
		n    int
		fail bool
	}{
		{nil, 0, false},
		{one, 1, false},
		{append(bytes.Clone(one), 0, 0), 2, false},
		{[]byte{0}, 0, true},
		{[]byte{0, 4, 'a'}, 0, true},
		{bytes.Repeat([]byte{0, 0}, 257), 0, true},
		{bytes.Repeat([]byte{0, 0}, 256), 256, false},
	} {
		got, err := parseBundle(tc.in)
		if (err != nil) != tc.fail || (!tc.fail && len(got) != tc.n) {
			t.Errorf("parseBundle(%x): %d leaves, %v", tc.in, len(got), err)
		}
	}
}

func TestTileURLPath(t *testing.T) {
	for _, tc := range []struct {
		t    tlog.Tile
		want string
	}{
		{tlog.Tile{H: 8, L: 0, N: 0, W: 256}, "/registry/log/tile/0/000"},
		{tlog.Tile{H: 8, L: 0, N: 5, W: 3}, "/registry/log/tile/0/005.p/3"},
		{tlog.Tile{H: 8, L: 2, N: 1234067, W: 256}, "/registry/log/tile/2/x001/x234/067"},
		{tlog.Tile{H: 8, L: -1, N: 1000, W: 256}, "/registry/log/tile/entries/x001/000"},
		{tlog.Tile{H: 8, L: -1, N: 2, W: 88}, "/registry/log/tile/entries/002.p/88"},
	} {
		if got := tileURLPath(tc.t); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.t, got, tc.want)
		}
	}
}

func TestParseLogKey(t *testing.T) {
	_, v := testNoteKey(t)
	k, err := tiles.NewLogKey("example.com/log")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	bad := filepath.Join(dir, "bad")
	_ = os.WriteFile(good, []byte("\n"+k.VerifierKey()+"\n"), 0o600)
	_ = os.WriteFile(bad, []byte("PRIVATE+KEY+x"), 0o600)
	for in, ok := range map[string]bool{
		k.VerifierKey(): true, " " + k.VerifierKey() + "\n": true, good: true,
		bad: false, filepath.Join(dir, "absent"): false, "": false, "example.com/log+1234+AAAA": false,
	} {
		got, err := ParseLogKey(in)
		if (err == nil) != ok || (ok && got.Name() != v.Name()) {
			t.Errorf("ParseLogKey(%q): %v", in, err)
		}
	}
}
