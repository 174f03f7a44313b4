package node

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx/auth"
)

// writeKeyFile writes a root key file of content and returns its path.
func writeKeyFile(t *testing.T, content []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cluster.key")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sameKey reports whether a and b verify each other's tokens.
func sameKey(t *testing.T, a, b *auth.Keyring) bool {
	t.Helper()
	tok, _, err := a.Mint(auth.MintOptions{Scopes: []string{"admin"}, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Verify(tok, time.Now())
	return err == nil
}

// TestRootKeyFile: cluster.root_key_file replaces <data>/keys/root.key: it
// is read in both encodings and never created; amnesia keeps a key in
// memory when it is missing; a malformed file is refused.
func TestRootKeyFile(t *testing.T) {
	raw := bytes.Repeat([]byte{7}, auth.KeySize)
	want, _ := auth.NewKeyring(raw)
	hexFile := writeKeyFile(t, []byte(hex.EncodeToString(raw)+"\n"))
	rawFile := writeKeyFile(t, raw)
	missing := filepath.Join(t.TempDir(), "absent.key")
	cases := []struct {
		name     string
		file     string
		amnesia  bool
		inMemory bool
		err      string
	}{
		{"hex file", hexFile, false, false, ""},
		{"raw file", rawFile, false, false, ""},
		{"hex file, amnesia", hexFile, true, false, ""},
		{"missing", missing, false, false, "no such file"},
		{"missing, amnesia", missing, true, true, ""},
		{"malformed", writeKeyFile(t, []byte("not a key\n")), false, false, "malformed root key"},
		{"short hex", writeKeyFile(t, []byte(strings.Repeat("ab", 31)+"\n")), false, false, "malformed root key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.DataDir, cfg.Amnesia, cfg.Cluster.RootKeyFile = t.TempDir(), c.amnesia, c.file
			keys, inMemory, err := loadRootKey(&cfg)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want an error mentioning %q", err, c.err)
				}
				return
			}
			if err != nil || inMemory != c.inMemory {
				t.Fatalf("loadRootKey: %v (in memory %t)", err, inMemory)
			}
			if !c.inMemory && !sameKey(t, keys, want) {
				t.Fatal("not the file's key")
			}
			if _, err := os.Stat(auth.KeyPath(cfg.DataDir)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a data dir key was created: %v", err)
			}
			if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("the root key file was created")
			}
		})
	}
	t.Run("client commands read it", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.DataDir, cfg.Cluster.RootKeyFile = t.TempDir(), hexFile
		keys, err := ReadRootKey(&cfg)
		if err != nil || !sameKey(t, keys, want) {
			t.Fatalf("ReadRootKey: %v", err)
		}
	})
}

// TestNodeIDResolution: cluster.node_id wins; else the id stored in the
// data dir, the same on every call; amnesia gives a new one per call.
func TestNodeIDResolution(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	first, err := resolveNodeID(&cfg)
	if err != nil || len(first) != 26 {
		t.Fatalf("generated id %q: %v", first, err)
	}
	if again, _ := resolveNodeID(&cfg); again != first {
		t.Fatalf("stored id changed: %q, %q", first, again)
	}
	cfg.Cluster.NodeID = "node-a"
	if id, _ := resolveNodeID(&cfg); id != "node-a" {
		t.Fatalf("configured id ignored: %q", id)
	}
	cfg.Cluster.NodeID, cfg.Amnesia, cfg.DataDir = "", true, t.TempDir()
	a, _ := resolveNodeID(&cfg)
	b, _ := resolveNodeID(&cfg)
	if a == b || a == first {
		t.Fatalf("amnesia ids %q, %q", a, b)
	}
}

// TestNodeTokenScopes: node tokens carry the read scopes only when reads are
// private on this node.
func TestNodeTokenScopes(t *testing.T) {
	keys, _ := auth.GenerateKeyring()
	for _, c := range []struct {
		name               string
		storagePub, idxPub bool
		wantRead           bool
	}{
		{"public reads", true, true, false},
		{"private storage reads", false, true, true},
		{"private index reads", true, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Storage.PublicReads, cfg.Index.PublicReads = c.storagePub, c.idxPub
			tok, err := nodeTokenSource(&cfg, keys)(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			p, err := keys.Verify(tok, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Allows("storage:read"); got != c.wantRead {
				t.Fatalf("storage:read allowed = %t, want %t", got, c.wantRead)
			}
			if !p.Allows("storage:replicate") || !p.Allows("index:write") {
				t.Fatal("node scopes missing")
			}
		})
	}
}
