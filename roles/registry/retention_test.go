package registry

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/registry/committer"
	"github.com/ronhq/ron/roles/registry/regstore"
	"github.com/ronhq/ron/roles/registry/tiles"
	"github.com/ronhq/ron/store/kv/memkv"
)

// prunableNode is a started on-disk registry over a seeded log of
// versions 0…360 in segments of 256, verified and checkpointed, with
// retention off (the tests run rounds on copies of its retention).
func prunableNode(t *testing.T) (*node, string, Config) {
	t.Helper()
	fastVerifier(t)
	dir := t.TempDir()
	signers := newSigners(t, 1)
	seedLog(t, dir, signers, 1, 360, 256)
	cfg := testConfig()
	cfg.SegmentRecords = 256
	n := startNode(t, testOptions(t, cfg, dir), signers, 1)
	n.waitVerified()
	return n, dir, cfg
}

// withPolicy is a copy of n's retention under policy edit.
func withPolicy(n *node, edit func(*Config)) retention {
	c := *n.ret
	cfg := testConfig()
	edit(&cfg)
	c.cfg = func() Config { return cfg }
	return c
}

// TestRetention runs each policy's plan over one log, then prunes it by
// count: only the oldest segment goes (verified, checkpointed, not
// holding HEAD), min_index rises durably, reads below it answer 410, and
// a restart keeps it and verifies from min_index.
func TestRetention(t *testing.T) {
	n, dir, cfg := prunableNode(t)
	t.Run("plans", func(t *testing.T) { retentionPlans(t, n) })
	t.Run("by-count", func(t *testing.T) { retentionByCount(t, n, dir, cfg) })
}

// retentionPlans checks each policy's plan.
func retentionPlans(t *testing.T, n *node) {
	key, err := tiles.NewLogKey("")
	if err != nil {
		t.Fatal(err)
	}
	empty, err := tiles.OpenTree(t.Context(), memkv.New(), key)
	if err != nil {
		t.Fatal(err)
	}
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	for _, tc := range []struct {
		name string
		edit func(*Config)
		mod  func(*retention)
		cut  uint64
		skip string
	}{
		{"off", func(c *Config) { c.RetentionPolicy = PolicyOff }, nil, 0, ""},
		{"by-count keeps 100", func(c *Config) { c.RetentionPolicy, c.RetentionMaxCount = PolicyByCount, 100 }, nil, 256, ""},
		{"by-count keeps all", func(c *Config) { c.RetentionPolicy, c.RetentionMaxCount = PolicyByCount, 1000 }, nil, 0, ""},
		{"by-size small target", func(c *Config) { c.RetentionPolicy, c.RetentionTargetBytes = PolicyBySize, 1 }, nil, 256, ""},
		{"by-size under target", func(c *Config) { c.RetentionPolicy = PolicyBySize }, nil, 0, ""},
		{"by-age young", func(c *Config) { c.RetentionPolicy, c.RetentionMaxAge = PolicyByAge, 2*time.Hour }, nil, 0, ""},
		{"by-age old", func(c *Config) { c.RetentionPolicy, c.RetentionMaxAge = PolicyByAge, time.Hour },
			func(r *retention) { r.now = later }, 256, ""},
		{"no checkpoint", func(c *Config) { c.RetentionPolicy, c.RetentionMaxCount = PolicyByCount, 100 },
			func(r *retention) { r.tree = empty }, 0, skipNoCheckpoint},
		{"partly verified", func(c *Config) { c.RetentionPolicy, c.RetentionTargetBytes = PolicyBySize, 1 },
			func(r *retention) { r.through = func() int64 { return 200 } }, 0, skipNotVerified},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := withPolicy(n, tc.edit)
			if tc.mod != nil {
				tc.mod(&r)
			}
			cfg := r.cfg()
			if cfg.RetentionPolicy == PolicyOff {
				if got, err := r.round(t.Context()); got != 0 || err != nil {
					t.Fatalf("off pruned %d, %v", got, err)
				}
				return
			}
			cut, skip := r.plan(cfg)
			if cut != tc.cut || skip != tc.skip {
				t.Fatalf("plan: cut %d skip %q, want %d %q", cut, skip, tc.cut, tc.skip)
			}
		})
	}
}

// retentionByCount prunes by count and restarts.
func retentionByCount(t *testing.T, n *node, dir string, cfg Config) {
	byCount := func(c *Config) { c.RetentionPolicy, c.RetentionMaxCount = PolicyByCount, 100 }

	unverified := withPolicy(n, byCount)
	unverified.through = func() int64 { return 200 }
	if got, err := unverified.round(t.Context()); got != 0 || err != nil {
		t.Fatalf("unverified segment pruned: %d, %v", got, err)
	}
	if v := n.metric(`ron_registry_prune_skipped_total{role="registry",reason="not_verified"}`); v != 1 {
		t.Fatalf("not_verified skips %v", v)
	}

	ret := withPolicy(n, byCount)
	if got, err := ret.round(t.Context()); got != 1 || err != nil {
		t.Fatalf("pruned %d segments, %v; want the first", got, err)
	}
	if mi, err := committer.MinIndex(t.Context(), n.st.RegDB); err != nil || mi != 256 || n.st.Log.MinIndex() != 256 {
		t.Fatalf("min_index %d (%v), log %d", mi, err, n.st.Log.MinIndex())
	}
	for path, want := range map[string]int{"/registry/255": http.StatusGone, "/registry/0": http.StatusGone,
		"/registry/256": http.StatusOK, "/registry/log/tile/entries/000": http.StatusGone,
		"/registry/log/tile/entries/001.p/105": http.StatusOK} {
		if code, body := n.get(path); code != want {
			t.Fatalf("GET %s: %d %s, want %d", path, code, body, want)
		}
	}
	if got, _ := ret.round(t.Context()); got != 0 {
		t.Fatalf("second round pruned %d: the rest is within the newest 100 versions", got)
	}
	if v := n.metric(`ron_registry_pruned_segments_total{role="registry"}`); v != 1 {
		t.Fatalf("pruned counter %v", v)
	}
	if st := n.statusBody(); st.MinIndex != 256 {
		t.Fatalf("status min_index %d", st.MinIndex)
	}
	n.stop()

	again := startNode(t, testOptions(t, cfg, dir), n.signers, 1)
	again.waitVerified()
	if again.st.Log.MinIndex() != 256 || again.lastFailure.Load() != nil || !again.statusBody().WriteReady {
		t.Fatalf("after restart: min_index %d, failure %v", again.st.Log.MinIndex(), again.lastFailure.Load())
	}
	again.commit("after pruning")
	again.waitVerified()
}

// TestRetentionAmnesia: amnesia never runs retention.
func TestRetentionAmnesia(t *testing.T) {
	n := startNode(t, testOptions(t, testConfig(), ""), nil, 0)
	if n.Tasks.Running() != 3 { // committer, checkpointer, verifier
		t.Fatalf("%d workers running", n.Tasks.Running())
	}
	if !strings.HasPrefix(n.st.Dir, regstore.AmnesiaRoot) {
		t.Fatalf("amnesia stores in %s", n.st.Dir)
	}
}
