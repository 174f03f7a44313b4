package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"path/filepath"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
)

// TestRegKeysAndCycle: regkeys writes signers that reg loads, and a cycle
// built on a HEAD is a valid HEAD+1 whose approvals verify.
func TestRegKeysAndCycle(t *testing.T) {
	dir := t.TempDir()
	res, err := runRegKeys(regKeysConfig{dir: dir, n: 3, m: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Signers != filepath.Join(dir, "signers.json") {
		t.Fatalf("signers file %q", res.Signers)
	}
	ss, err := loadSigners(res.Signers)
	if err != nil {
		t.Fatal(err)
	}
	if ss.M != 2 || len(ss.Signers) != 3 {
		t.Fatalf("loaded %d of %d", ss.M, len(ss.Signers))
	}
	head := &regHead{Version: 4, PayloadB3: "b3:0000000000000000000000000000000000000000000000000000000000000000"}
	req, aps, err := buildCycle(ss, head, "n-1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	set, err := descriptor.ParseSet(req.Payload, descriptor.DefaultLimits(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if set.Version != 5 || set.PrevHash != head.PayloadB3 || set.B3 != req.PayloadB3 {
		t.Fatalf("set v%d prev %s b3 %s", set.Version, set.PrevHash, set.B3)
	}
	if len(aps) != 2 {
		t.Fatalf("%d approvals, want 2", len(aps))
	}
	for i, ap := range aps {
		sig, err := base64.StdEncoding.DecodeString(ap.Sig)
		if err != nil || !ed25519.Verify(ss.Signers[i].priv.Public().(ed25519.PublicKey), descriptor.SigningMessage(set.B3), sig) {
			t.Fatalf("approval %d does not verify", i)
		}
	}
}

// TestRegBadFlags: reg and regkeys refuse bad command lines (exit 2).
func TestRegBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"regkeys"},
		{"regkeys", "-dir", "x", "-m", "4", "-n", "3"},
		{"reg", "-url", "http://a"},
		{"reg", "-url", "http://a", "-token", "t"},
		{"reg", "-url", "http://a", "-token", "t", "-signers", "/nonexistent", "-c", "0"},
	} {
		if code := run(args, &discard{}, &discard{}); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

type discard struct{}

func (*discard) Write(p []byte) (int, error) { return len(p), nil }
