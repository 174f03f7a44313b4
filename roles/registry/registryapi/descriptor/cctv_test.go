package descriptor

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ronhq/ron/internal/fixtures"
)

// cctvVector is one C2SP/CCTV Ed25519 edge-case vector.
type cctvVector struct {
	Number int      `json:"number"`
	Key    string   `json:"key"`
	Sig    string   `json:"sig"`
	Msg    string   `json:"msg"`
	Flags  []string `json:"flags"`
}

func loadCCTV(t *testing.T) []cctvVector {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures.Dir(t), "ed25519", "ed25519vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []cctvVector
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) != 914 {
		t.Fatalf("%d vectors, want 914", len(vs))
	}
	return vs
}

func (v cctvVector) has(flag string) bool { return slices.Contains(v.Flags, flag) }

// TestCCTVVectors pins, per vector, what ron decides:
//
//   - verifySig (the check SignerSet.Verify uses) equals crypto/ed25519.Verify
//     and accepts exactly the vectors without non_canonical_R and
//     low_order_residue: 208 of 914 (Go's documented behaviour, recorded in
//     testdata/SOURCES.md §6);
//   - ParsePubkey refuses every key flagged low_order_A (small order, which
//     includes every non_canonical_A key): 526 vectors; it accepts the rest
//     (388, low_order_component_A included), of which 86 verify, again
//     exactly those without non_canonical_R and low_order_residue. So a
//     signer key never changes Go's rule, it only removes small-order keys.
func TestCCTVVectors(t *testing.T) {
	var accepted, acceptedWithKey, keysRefused int
	for _, v := range loadCCTV(t) {
		key, _ := hex.DecodeString(v.Key)
		sig, _ := hex.DecodeString(v.Sig)
		want := !v.has("non_canonical_R") && !v.has("low_order_residue")
		got := verifySig(ed25519.PublicKey(key), []byte(v.Msg), sig)
		if got != want || got != ed25519.Verify(key, []byte(v.Msg), sig) {
			t.Errorf("vector %d %v: verifySig = %v, want %v", v.Number, v.Flags, got, want)
		}
		if got {
			accepted++
		}
		_, err := ParsePubkey(base64.StdEncoding.EncodeToString(key))
		if refuse := v.has("low_order_A"); (err != nil) != refuse {
			t.Errorf("vector %d %v: ParsePubkey err = %v, want refused %v", v.Number, v.Flags, err, refuse)
		}
		if v.has("non_canonical_A") && err == nil {
			t.Errorf("vector %d: non-canonical key accepted", v.Number)
		}
		if err != nil {
			keysRefused++
			continue
		}
		if got {
			acceptedWithKey++
		}
	}
	if accepted != 208 || keysRefused != 526 || acceptedWithKey != 86 {
		t.Errorf("accepted %d (want 208), keys refused %d (want 526), accepted with an admissible key %d (want 86)",
			accepted, keysRefused, acceptedWithKey)
	}
}

// TestParsePubkeyTable covers the encodings around the point checks.
func TestParsePubkeyTable(t *testing.T) {
	valid := pubB64(1)
	cases := []struct {
		name string
		b64  string
		ok   bool
	}{
		{"generated key", valid, true},
		{"empty", "", false},
		{"31 bytes", pk(hex32(1)[:31]), false},
		{"33 bytes", pk(append(hex32(1), 0)), false},
		{"non-strict padding bits", valid[:42] + string(valid[42]+1) + "=", false},
		{"identity", pk(append([]byte{1}, make([]byte, 31)...)), false},
		{"order 2", pk(mustDecodeHex(t, "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")), false},
		{"order 8", pk(mustDecodeHex(t, "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")), false},
		{"y = p (non-canonical zero)", pk(mustDecodeHex(t, "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")), false},
		{"identity with x = -0", pk(mustDecodeHex(t, "0100000000000000000000000000000000000000000000000000000000000080")), false},
		{"not on the curve", pk(mustDecodeHex(t, "0200000000000000000000000000000000000000000000000000000000000000")), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key, err := ParsePubkey(c.b64)
			if c.ok != (err == nil) {
				t.Fatalf("ParsePubkey(%q) = %v", c.b64, err)
			}
			if err != nil {
				checkErr(t, err, bad(ReasonInvalidValue, -1, "pubkey"))
			} else if pk(key) != c.b64 {
				t.Fatal("key bytes differ")
			}
		})
	}
}

func mustDecodeHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
