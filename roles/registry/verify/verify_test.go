package verify

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/tiles"
)

// wantMismatch asserts err is a Mismatch of check, at version v when v ≥ 0.
func wantMismatch(t *testing.T, err error, check string, v int64) *Mismatch {
	t.Helper()
	var m *Mismatch
	if !errors.As(err, &m) {
		t.Fatalf("error %v (%T), want a %s mismatch", err, err, check)
	}
	if m.Check != check {
		t.Fatalf("check %q (%v), want %q", m.Check, m, check)
	}
	if v >= 0 && (!m.HasVersion || m.Version != uint64(v)) {
		t.Fatalf("mismatch %v, want it at version %d", m, v)
	}
	return m
}

func TestRunGoodLog(t *testing.T) {
	for _, n := range []int{1, 2, 256, 257} {
		f := newFixture(t, cachedLeaves(t, n))
		var progress bytes.Buffer
		opt := f.options()
		opt.Progress = &progress
		opt.Genesis = descriptor.PayloadB3(mustArtifact(t, f.leaves[0]).Payload)
		res, err := Run(context.Background(), opt)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if res.Size != uint64(n) || res.Verified != uint64(n) || res.Head != uint64(n-1) || res.Unpinned ||
			res.Origin != f.key.Origin() || res.MinIndex != 0 || res.Tiles == 0 {
			t.Fatalf("n=%d: result %+v", n, res)
		}
		if !strings.Contains(progress.String(), "ok: ") || strings.Contains(progress.String(), "unpinned") {
			t.Fatalf("n=%d: progress %q", n, progress.String())
		}
	}
}

func TestRunUnpinnedWarns(t *testing.T) {
	f := newFixture(t, cachedLeaves(t, 3))
	var progress bytes.Buffer
	opt := f.options()
	opt.LogKey, opt.Progress = "", &progress
	res, err := Run(context.Background(), opt)
	if err != nil || !res.Unpinned || !strings.Contains(progress.String(), "warning: unpinned") {
		t.Fatalf("res %+v err %v progress %q", res, err, progress.String())
	}
}

func TestRunLogKeyFile(t *testing.T) {
	f := newFixture(t, cachedLeaves(t, 3))
	path := filepath.Join(t.TempDir(), "vkey")
	if err := os.WriteFile(path, []byte(f.key.VerifierKey()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opt := f.options()
	opt.LogKey = path
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	opt.LogKey = filepath.Join(t.TempDir(), "absent")
	if _, err := Run(context.Background(), opt); !errors.Is(err, ErrOptions) {
		t.Fatalf("missing key file: %v", err)
	}
}

// TestRunPruned: below min_index bundles and level-0 tiles answer 410;
// the prefix is anchored by the root through the level-1 hashes (size 600
// lies in the window where only the partial level-1 tile holds them), and
// a genesis pin cannot be checked.
func TestRunPruned(t *testing.T) {
	f := newFixture(t, cachedLeaves(t, 600))
	for _, min := range []uint64{256, 512, 599} {
		f.minIndex = min
		res, err := Run(context.Background(), f.options())
		if err != nil {
			t.Fatalf("min_index %d: %v", min, err)
		}
		if res.MinIndex != min || res.Verified != 600-min {
			t.Fatalf("min_index %d: result %+v", min, res)
		}
	}
	f.minIndex = 512
	opt := f.options()
	opt.Genesis = descriptor.PayloadB3(mustArtifact(t, f.leaves[0]).Payload)
	_, err := Run(context.Background(), opt)
	wantMismatch(t, err, CheckGenesis, 0)

	// A 410 for a tile that is not wholly below min_index is an error.
	f.hooks.gone = func(path string) bool { return path == "0/002.p/88" }
	var he *httpx.Error
	if _, err := Run(context.Background(), f.options()); !errors.As(err, &he) || he.Status != http.StatusGone {
		t.Fatalf("410 above min_index: %v", err)
	}
	// min_index at or past the checkpoint size is refused.
	f.hooks.gone, f.minIndex = nil, 600
	_, err = Run(context.Background(), f.options())
	wantMismatch(t, err, CheckCheckpoint, -1)
}

func TestRunGenesisPin(t *testing.T) {
	f := newFixture(t, cachedLeaves(t, 5))
	opt := f.options()
	opt.Genesis = "b3:" + strings.Repeat("ab", 32)
	_, err := Run(context.Background(), opt)
	wantMismatch(t, err, CheckGenesis, 0)
	opt.Genesis = "b3:nothex"
	if _, err := Run(context.Background(), opt); !errors.Is(err, ErrOptions) {
		t.Fatalf("bad --genesis: %v", err)
	}
}

func mustArtifact(t *testing.T, leaf []byte) descriptor.Artifact {
	t.Helper()
	a, err := descriptor.ParseArtifact(leaf)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestTamperLeaves: logs whose tampered leaves are covered by tiles and a
// validly signed checkpoint, so only the semantic checks can catch them,
// each at the tampered version.
func TestTamperLeaves(t *testing.T) {
	const at = 20
	other := ed25519Key(7)
	for _, tc := range []struct {
		name  string
		e     edits
		check string
	}{
		{"prev_hash edited, payload re-hashed and re-signed", edits{payload: func(v uint64, p map[string]any) {
			if v == at {
				p["prev_hash"] = "b3:" + strings.Repeat("0f", 32)
			}
		}}, CheckPrevHash},
		{"version skipped", edits{payload: func(v uint64, p map[string]any) {
			if v >= at {
				p["version"] = v + 1
			}
		}, artifact: func(v uint64, a *descriptor.Artifact) {
			if v >= at {
				a.Version = v + 1
			}
		}}, CheckVersion},
		{"artifact prev_hash differs from payload's", edits{artifact: func(v uint64, a *descriptor.Artifact) {
			if v == at {
				a.PrevHash = "b3:" + strings.Repeat("0e", 32)
			}
		}}, CheckPrevHash},
		{"approval signature flipped", edits{artifact: func(v uint64, a *descriptor.Artifact) {
			if v == at {
				a.Approvals[0].Sig = flipSig(a.Approvals[0].Sig)
			}
		}}, CheckSignature},
		{"approval by an unknown signer", edits{artifact: func(v uint64, a *descriptor.Artifact) {
			if v == at {
				a.Approvals = []descriptor.Approval{descriptor.Sign(other, "org:evil#k1", a.PayloadB3, t0)}
			}
		}}, CheckSignature},
		{"approval signer renamed", edits{artifact: func(v uint64, a *descriptor.Artifact) {
			if v == at {
				a.Approvals[0].SignerID = "org:test#k2"
			}
		}}, CheckSignature},
		{"approvals removed", edits{artifact: func(v uint64, a *descriptor.Artifact) {
			if v == at {
				a.Approvals = nil
			}
		}}, CheckQuorum},
		{"approval duplicated", edits{artifact: func(v uint64, a *descriptor.Artifact) {
			if v == at {
				a.Approvals = append(a.Approvals, a.Approvals[0])
			}
		}}, CheckQuorum},
		{"payload_b3 edited", edits{artifact: func(v uint64, a *descriptor.Artifact) {
			if v == at {
				a.PayloadB3 = "b3:" + strings.Repeat("11", 32)
			}
		}}, CheckPayloadB3},
		{"committed_at steps back", edits{artifact: func(v uint64, a *descriptor.Artifact) {
			if v == at {
				a.CommittedAt = descriptor.FormatTime(t0)
			}
		}}, CheckCommittedAt},
		{"genesis carries an approval", edits{artifact: func(v uint64, a *descriptor.Artifact) {
			if v == 0 {
				a.Approvals = []descriptor.Approval{descriptor.Sign(testKey, signerID, a.PayloadB3, t0)}
			}
		}}, CheckSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, buildLeaves(t, at+4, tc.e))
			_, err := Run(context.Background(), f.options())
			want := int64(at)
			if strings.HasPrefix(tc.name, "genesis") {
				want = 0
			}
			wantMismatch(t, err, tc.check, want)
		})
	}
}

// TestTamperServedBytes: a flipped byte anywhere in a served leaf (tiles
// built from the true log) is caught at that leaf's version.
func TestTamperServedBytes(t *testing.T) {
	leaves := cachedLeaves(t, 30)
	f := newFixture(t, leaves)
	const v = 20
	for _, off := range []int{0, 1, 10, 40, 100, len(leaves[v]) / 2, len(leaves[v]) - 30, len(leaves[v]) - 1} {
		f.hooks.bundle = func(n uint64, b []byte) []byte {
			if n != v/256 {
				return b
			}
			b = bytes.Clone(b)
			pos := 0
			for range v % 256 {
				pos += 2 + (int(b[pos])<<8 | int(b[pos+1]))
			}
			b[pos+2+off] ^= 0x01
			return b
		}
		_, err := Run(context.Background(), f.options())
		m := wantMismatchAny(t, err)
		if !m.HasVersion || m.Version != v {
			t.Fatalf("offset %d: %v, want a mismatch at version %d", off, m, v)
		}
	}
}

// wantMismatchAny asserts err is a Mismatch.
func wantMismatchAny(t *testing.T, err error) *Mismatch {
	t.Helper()
	var m *Mismatch
	if !errors.As(err, &m) {
		t.Fatalf("error %v (%T), want a mismatch", err, err)
	}
	return m
}

func TestTamperTiles(t *testing.T) {
	leaves := cachedLeaves(t, 300)
	for _, tc := range []struct {
		name  string
		hook  func(level uint8, n uint64, b []byte) []byte
		check string
		v     int64
	}{
		{"level-0 hashes swapped", func(level uint8, n uint64, b []byte) []byte {
			if level == 0 && n == 0 {
				b = swap(b, 3, 4)
			}
			return b
		}, CheckLeaf, 3},
		{"level-0 tile of shifted leaves", func(level uint8, n uint64, b []byte) []byte {
			if level == 0 && n == 0 {
				return tileOf(leaves[1:257])
			}
			return b
		}, CheckLeaf, 0},
		{"level-1 hash flipped", func(level uint8, n uint64, b []byte) []byte {
			if level == 1 {
				b = bytes.Clone(b)
				b[5] ^= 1
			}
			return b
		}, CheckTile, 0},
		{"partial tile truncated", func(level uint8, n uint64, b []byte) []byte {
			if level == 0 && n == 1 {
				b = b[:len(b)-32]
			}
			return b
		}, CheckTile, 256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, leaves)
			f.hooks.tile = tc.hook
			_, err := Run(context.Background(), f.options())
			wantMismatch(t, err, tc.check, tc.v)
		})
	}
}

// tileOf is the level-0 tile over leaves.
func tileOf(leaves [][]byte) []byte {
	var out []byte
	for _, l := range leaves {
		h := recordHash(l)
		out = append(out, h[:]...)
	}
	return out
}

func swap(b []byte, i, j int) []byte {
	b = bytes.Clone(b)
	hi, hj := bytes.Clone(b[i*32:i*32+32]), bytes.Clone(b[j*32:j*32+32])
	copy(b[i*32:], hj)
	copy(b[j*32:], hi)
	return b
}

func flipSig(sig string) string {
	b := []byte(sig)
	if b[0] == 'A' {
		b[0] = 'B'
	} else {
		b[0] = 'A'
	}
	return string(b)
}

func TestTamperCheckpoint(t *testing.T) {
	leaves := buildLeaves(t, 300, edits{})
	f := newFixture(t, leaves)
	impostor, err := tiles.NewLogKey(f.key.Origin())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		hook  func([]byte) []byte
		check string
	}{
		{"signed by another key of the same name", func(b []byte) []byte {
			n, _ := note.Open(b, note.VerifierList(f.key.Verifier()))
			out, _ := note.Sign(&note.Note{Text: n.Text}, impostor.Signer())
			return out
		}, CheckCheckpointSig},
		{"size edited", func(b []byte) []byte {
			return bytes.Replace(b, []byte("\n300\n"), []byte("\n299\n"), 1)
		}, CheckCheckpointSig},
		{"signature flipped", func(b []byte) []byte {
			b = bytes.Clone(b)
			b[len(b)-5] ^= 1
			return b
		}, CheckCheckpointSig},
		{"validly signed wrong root", func(b []byte) []byte {
			n, _ := note.Open(b, note.VerifierList(f.key.Verifier()))
			lines := strings.Split(n.Text, "\n")
			lines[2] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
			out, _ := note.Sign(&note.Note{Text: strings.Join(lines, "\n")}, f.key.Signer())
			return out
		}, CheckRoot},
		{"validly signed extension line", func(b []byte) []byte {
			n, _ := note.Open(b, note.VerifierList(f.key.Verifier()))
			out, _ := note.Sign(&note.Note{Text: n.Text + "ext\n"}, f.key.Signer())
			return out
		}, CheckCheckpoint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.hooks.checkpoint = tc.hook
			_, err := Run(context.Background(), f.options())
			wantMismatch(t, err, tc.check, -1)
		})
	}
}

func TestEnds(t *testing.T) {
	f := newFixture(t, cachedLeaves(t, 10))
	f.hooks.artifact = func(v uint64, b []byte) []byte { return append(bytes.Clone(b), ' ') }
	_, err := Run(context.Background(), f.options())
	wantMismatch(t, err, CheckArtifact, 9)

	f.hooks.artifact = nil
	f.hooks.head = func(h map[string]any) { h["version"] = 8 }
	_, err = Run(context.Background(), f.options())
	wantMismatch(t, err, CheckHead, 9)

	f.hooks.head = func(h map[string]any) { h["payload_b3"] = descriptor.ZeroHash }
	_, err = Run(context.Background(), f.options())
	wantMismatch(t, err, CheckHead, 9)

	// HEAD ahead of the checkpoint is fine.
	f.hooks.head = func(h map[string]any) { h["version"] = 12 }
	res, err := Run(context.Background(), f.options())
	if err != nil || res.Head != 12 {
		t.Fatalf("head ahead: %+v %v", res, err)
	}
}

func TestState(t *testing.T) {
	leaves := cachedLeaves(t, 200)
	f := newFixture(t, leaves[:40])
	state := filepath.Join(t.TempDir(), "state.json")
	opt := f.options()
	opt.StateFile = state
	res, err := Run(context.Background(), opt)
	if err != nil || !res.StateSaved || res.PreviousSize != 0 {
		t.Fatalf("first run: %+v %v", res, err)
	}
	// Same checkpoint again, then an extension: consistent.
	if res, err = Run(context.Background(), opt); err != nil || res.PreviousSize != 40 {
		t.Fatalf("second run: %+v %v", res, err)
	}
	f.extend(t, leaves[40:])
	if res, err = Run(context.Background(), opt); err != nil || res.PreviousSize != 40 || res.Size != 200 {
		t.Fatalf("extended: %+v %v", res, err)
	}
	saved, _ := os.ReadFile(state)

	// A forked log under the same key: every check passes but the state.
	fork := buildLeaves(t, 201, edits{payload: func(v uint64, p map[string]any) {
		if v == 20 {
			p["note"] = "fork"
		}
	}})
	f.reset(t, fork)
	_, err = Run(context.Background(), opt)
	wantMismatch(t, err, CheckConsistency, -1)
	if now, _ := os.ReadFile(state); !bytes.Equal(now, saved) {
		t.Fatal("a failed run rewrote the state file")
	}
	// Same size, another root; and a shrunk log.
	f.reset(t, fork[:200])
	_, err = Run(context.Background(), opt)
	wantMismatch(t, err, CheckConsistency, -1)
	f.reset(t, leaves[:100])
	_, err = Run(context.Background(), opt)
	wantMismatch(t, err, CheckConsistency, -1)
	// Another origin.
	other := newFixture(t, leaves[:10])
	oopt := other.options()
	oopt.StateFile = state
	_, err = Run(context.Background(), oopt)
	wantMismatch(t, err, CheckConsistency, -1)

	if err := os.WriteFile(state, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), opt); !errors.Is(err, ErrOptions) {
		t.Fatalf("corrupt state file: %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	f := newFixture(t, cachedLeaves(t, 2))
	opt := f.options()
	f.srv.Close()
	_, err := Run(context.Background(), opt)
	var ue *UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("closed server: %v (%T)", err, err)
	}
}

func TestBadOptions(t *testing.T) {
	for _, url := range []string{"", "ftp://x", "127.0.0.1:9444", "http://", "http://a b", "not a url"} {
		if _, err := Run(context.Background(), Options{URL: url}); !errors.Is(err, ErrOptions) {
			t.Errorf("URL %q: %v", url, err)
		}
	}
	if _, err := Run(context.Background(), Options{URL: "http://127.0.0.1:1", LogKey: "not a key"}); !errors.Is(err, ErrOptions) {
		t.Errorf("bad --log-key: %v", err)
	}
}
