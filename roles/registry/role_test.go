package registry

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registryapi/descriptor"
	"github.com/ronhq/ron/roles/registry/regstore"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/runtime"
)

func TestAmnesiaDevSigner(t *testing.T) {
	opt := testOptions(t, testConfig(), "")
	sub := opt.Bus.Subscribe("test")
	defer sub.Close()
	n := startNode(t, opt, nil, 0)
	id, key, ok := n.DevSigner()
	if !ok || id != regstore.DevSignerID || len(key) == 0 {
		t.Fatalf("DevSigner() = %q, %d bytes, %v", id, len(key), ok)
	}
	st := n.statusBody()
	if !st.DevSigner || !st.Amnesia || !st.WriteReady || !st.ReadReady || st.Quorum.M != 1 || st.Quorum.N != 1 ||
		!slices.Equal(st.Signers, []string{regstore.DevSignerID}) || st.Checkpoint.Size != 1 {
		t.Fatalf("status at start: %+v", st)
	}
	var last registryapi.Committed
	for i := range 3 {
		last = n.commit("amnesia-" + string(rune('a'+i)))
	}
	if last.Version != 3 {
		t.Fatalf("third commit is version %d", last.Version)
	}
	n.waitVerified()
	if got := n.statusBody(); got.Head.Version != 3 || got.Checkpoint.Size != 4 || got.Verifier.VerifiedThrough == nil ||
		*got.Verifier.VerifiedThrough != 3 || got.Verifier.PassStartedAt == "" || got.Verifier.LastFailure != nil {
		t.Fatalf("status after commits: %+v", got)
	}
	for v := uint64(1); v <= 3; v++ {
		ev := <-sub.C()
		if u, ok := ev.(runtime.RegistryUpdated); !ok || u.Version != v {
			t.Fatalf("bus event %d: %#v", v, ev)
		}
	}
	if n.metric(`ron_registry_checkpoint_size{role="registry"}`) != 4 ||
		n.metric(`ron_registry_verified_version{role="registry"}`) != 3 {
		t.Fatalf("metrics: %v", n.opt.Metrics.Values())
	}
	if n.LastError() != "" {
		t.Fatalf("details: %v", n.Details())
	}
}

func TestDiskTrustRootsRestart(t *testing.T) {
	dir := t.TempDir()
	signers := newSigners(t, 3)
	trPath, pin := writeTrustRoots(t, t.TempDir(), signers, 2)
	cfg := testConfig()
	cfg.TrustRoots, cfg.TrustRootsB3, cfg.AllowDevSigner = trPath, pin, false
	opt := testOptions(t, cfg, dir)
	n := startNode(t, opt, signers[1:], 2)
	if _, _, ok := n.DevSigner(); ok {
		t.Fatal("dev signer with trust roots")
	}
	n.commit("one")
	c := n.commit("two")
	n.waitCovered()
	cp := n.tree.Checkpoint()
	n.stop()
	checkMode(t, filepath.Join(dir, regstore.DirName), 0o700)
	checkMode(t, tiles.LogKeyPath(dir), 0o600)
	if _, err := os.Stat(regstore.DevSignerPath(dir)); !os.IsNotExist(err) {
		t.Fatalf("dev signer key written with trust roots: %v", err)
	}

	again := startNode(t, opt, signers[:2], 2)
	if h := again.com.Head(); h.Version != c.Version || h.PayloadB3 != c.PayloadB3 {
		t.Fatalf("HEAD after restart %d %s, want %d %s", h.Version, h.PayloadB3, c.Version, c.PayloadB3)
	}
	if got := again.tree.Checkpoint(); got.Size != cp.Size || !bytes.Equal(got.Note, cp.Note) {
		t.Fatalf("checkpoint after restart: %d, want %d", got.Size, cp.Size)
	}
	if st := again.statusBody(); !st.WriteReady || st.DevSigner || st.Quorum.M != 2 || st.Quorum.N != 3 {
		t.Fatalf("status after restart: %+v", st)
	}
	again.commit("three")
	again.waitVerified()
}

// checkMode asserts a file's permission bits.
func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Fatalf("%s has mode %v, want %v", path, got, want)
	}
}

func TestExistingLogIgnoresTrustRoots(t *testing.T) {
	dir := t.TempDir()
	signers := newSigners(t, 2)
	trPath, _ := writeTrustRoots(t, t.TempDir(), signers, 1)
	cfg := testConfig()
	cfg.TrustRoots = trPath
	n := startNode(t, testOptions(t, cfg, dir), signers, 1)
	n.stop()
	other, _ := writeTrustRoots(t, t.TempDir(), newSigners(t, 3), 2)
	cfg.TrustRoots = other
	again := startNode(t, testOptions(t, cfg, dir), signers, 1)
	if st := again.statusBody(); st.Quorum.N != 2 || !st.WriteReady {
		t.Fatalf("the existing genesis must win: %+v", st)
	}
	if d := compareTrustRoots(again.st.Log, mustTrustRoots(t, other)); d == "" {
		t.Fatal("differing trust roots compare equal")
	}
	if d := compareTrustRoots(again.st.Log, mustTrustRoots(t, trPath)); d != "" {
		t.Fatalf("the genesis trust roots differ: %s", d)
	}
}

func mustTrustRoots(t *testing.T, path string) descriptor.TrustRoots {
	t.Helper()
	tr, err := regstore.LoadTrustRoots(path, "")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestDevSignerOnDisk(t *testing.T) {
	dir := t.TempDir()
	n := startNode(t, testOptions(t, testConfig(), dir), nil, 0)
	_, key, _ := n.DevSigner()
	n.commit("dev")
	n.stop()
	checkMode(t, regstore.DevSignerPath(dir), 0o600)
	again := startNode(t, testOptions(t, testConfig(), dir), nil, 0)
	id, key2, ok := again.DevSigner()
	if !ok || id != regstore.DevSignerID || !key.Equal(key2) {
		t.Fatal("the dev signer did not survive the restart")
	}
	if st := again.statusBody(); !st.DevSigner || st.Head.Version != 1 {
		t.Fatalf("status: %+v", st)
	}
	again.commit("dev again")
}

func TestStartFailures(t *testing.T) {
	signers := newSigners(t, 3)
	trDir := t.TempDir()
	trPath, pin := writeTrustRoots(t, trDir, signers, 2)
	bad := filepath.Join(trDir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"schema_version":"1.0.0","signers":[],"quorum":{"m":1,"n":0}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	wrongPin := "b3:" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"pin mismatch", func(c *Config) { c.TrustRoots, c.TrustRootsB3 = trPath, wrongPin }, "registry.trust_roots_b3"},
		{"pin not b3", func(c *Config) { c.TrustRoots, c.TrustRootsB3 = trPath, "b3:xyz" }, "registry.trust_roots_b3"},
		{"pin without file", func(c *Config) { c.TrustRootsB3 = pin }, "registry.trust_roots_b3"},
		{"missing file", func(c *Config) { c.TrustRoots = filepath.Join(trDir, "nope.json") }, "registry.trust_roots"},
		{"bad file", func(c *Config) { c.TrustRoots = bad }, "registry.trust_roots"},
		{"neither", func(c *Config) { c.AllowDevSigner = false }, "neither registry.trust_roots nor registry.allow_dev_signer"},
		{"bad origin", func(c *Config) { c.LogOrigin = "has space" }, "registry.log_origin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig()
			tc.edit(&cfg)
			err := New(testOptions(t, cfg, dir)).Start(t.Context())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Start: %v, want an error naming %q", err, tc.want)
			}
			cfg = testConfig()
			cfg.TrustRoots = trPath
			startNode(t, testOptions(t, cfg, dir), signers, 2) // nothing stayed locked
		})
	}
}

func TestOriginFixed(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	cfg.LogOrigin = "registry.example.com/ron"
	n := startNode(t, testOptions(t, cfg, dir), nil, 0)
	if got := n.st.Key.Origin(); got != cfg.LogOrigin {
		t.Fatalf("origin %q", got)
	}
	n.stop()
	cfg.LogOrigin = "other.example.com/ron"
	err := New(testOptions(t, cfg, dir)).Start(t.Context())
	if err == nil || !strings.Contains(err.Error(), "registry.log_origin") {
		t.Fatalf("another origin: %v", err)
	}
	cfg.LogOrigin = ""
	again := startNode(t, testOptions(t, cfg, dir), nil, 0)
	if got := again.st.Key.Origin(); got != "registry.example.com/ron" {
		t.Fatalf("origin after an empty log_origin: %q", got)
	}
	code, body := again.get("/registry/log/checkpoint")
	if code != 200 || !strings.HasPrefix(string(body), "registry.example.com/ron\n1\n") {
		t.Fatalf("checkpoint: %d %q", code, body)
	}
}

func TestDefaultOrigin(t *testing.T) {
	n := startNode(t, testOptions(t, testConfig(), ""), nil, 0)
	if want := tiles.DefaultOrigin(n.st.Key.PublicKey()); n.st.Key.Origin() != want {
		t.Fatalf("origin %q, want %q", n.st.Key.Origin(), want)
	}
}

func TestInitStore(t *testing.T) {
	dir := t.TempDir()
	signers := newSigners(t, 3)
	trPath, _ := writeTrustRoots(t, t.TempDir(), signers, 2)
	res, err := regstore.Init(t.Context(), dir, trPath, "init.example/ron", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.VerifierKey, "init.example/ron+") || !strings.HasPrefix(res.PayloadB3, "b3:") {
		t.Fatalf("result %+v", res)
	}
	if _, err := regstore.Init(t.Context(), dir, trPath, "", time.Now()); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second init: %v", err)
	}
	cfg := testConfig()
	cfg.AllowDevSigner = false
	n := startNode(t, testOptions(t, cfg, dir), signers, 2)
	if h := n.com.Head(); h.Version != 0 || h.PayloadB3 != res.PayloadB3 {
		t.Fatalf("HEAD %d %s, want genesis %s", h.Version, h.PayloadB3, res.PayloadB3)
	}
	if n.tree.Size() != 1 || n.st.Key.VerifierKey() != res.VerifierKey {
		t.Fatalf("checkpoint size %d, key %s", n.tree.Size(), n.st.Key.VerifierKey())
	}
	n.commit("after init")
}

func TestReadinessAndDrain(t *testing.T) {
	n := startNode(t, testOptions(t, testConfig(), ""), nil, 0)
	if rd := n.Ready(t.Context()); !rd.Ready() {
		t.Fatalf("ready: %+v", rd)
	}
	n.Drain()
	if rd := n.Ready(t.Context()); len(rd.Missing) != 1 || rd.Missing[0] != roleName {
		t.Fatalf("draining: %+v", rd)
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	_, err := n.client.Commit(ctx, "p_"+strings.Repeat("0", 32))
	if err == nil || !strings.Contains(err.Error(), "draining") {
		t.Fatalf("commit while draining: %v", err)
	}
	if got := n.com.WriteUnready(); !slices.Contains(got, committer.ReasonDraining) {
		t.Fatalf("write unready %v", got)
	}
}
