package registry

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/registry/committer"
)

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:9444" || c.MaxInflight != 512 || c.RPS != 0 || c.MaxConnsPerIP != 256 ||
		!c.PublicReads || c.ReadOnly || !c.AllowDevSigner || c.ProposalTTL != 72*time.Hour ||
		c.TombstoneTTL != 168*time.Hour || c.MaxOpenProposals != 1024 || c.QueueCommits != 512 ||
		c.MaxPayloadBytes != 49152 || c.ClockSkew != 5*time.Minute || c.CommitTimeout != 2*time.Second ||
		c.GroupCommitMax != 256 || c.SegmentRecords != 1024 || c.CheckpointMaxLag != time.Minute ||
		c.RetentionPolicy != PolicyByAge || c.RetentionMaxAge != 720*time.Hour || c.RetentionMaxCount != 10000 ||
		c.RetentionTargetBytes != 1<<30 || c.RetentionInterval != 10*time.Minute || c.VerifySlice != 20*time.Millisecond ||
		c.VerifyFullInterval != 24*time.Hour || c.StreamHeartbeat != 5*time.Second || c.StreamMaxClients != 1024 ||
		c.StreamMaxLag != 1024 {
		t.Fatalf("defaults differ from docs/registry.md §7: %+v", c)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		key  string
		edit func(*Config)
	}{
		{"listen", func(c *Config) { c.Listen = " " }},
		{"advertise_url", func(c *Config) { c.AdvertiseURL = "ftp://x" }},
		{"advertise_url", func(c *Config) { c.AdvertiseURL = "http://h/?q=1" }},
		{"max_inflight", func(c *Config) { c.MaxInflight = 0 }},
		{"rps", func(c *Config) { c.RPS = -1 }},
		{"max_conns_per_ip", func(c *Config) { c.MaxConnsPerIP = 0 }},
		{"trust_roots_b3", func(c *Config) { c.TrustRoots, c.TrustRootsB3 = "f", "b3:XYZ" }},
		{"trust_roots_b3", func(c *Config) { c.TrustRootsB3 = "b3:" + strings.Repeat("0", 64) }},
		{"log_origin", func(c *Config) { c.LogOrigin = "a+b" }},
		{"log_origin", func(c *Config) { c.LogOrigin = "a b" }},
		{"proposal_ttl", func(c *Config) { c.ProposalTTL = 59 * time.Second }},
		{"proposal_ttl", func(c *Config) { c.ProposalTTL = 721 * time.Hour }},
		{"tombstone_ttl", func(c *Config) { c.TombstoneTTL = time.Minute }},
		{"max_open_proposals", func(c *Config) { c.MaxOpenProposals = 0 }},
		{"max_open_proposals", func(c *Config) { c.MaxOpenProposals = 100001 }},
		{"queue_proposals", func(c *Config) { c.QueueProposals = 0 }},
		{"queue_approvals", func(c *Config) { c.QueueApprovals = 65537 }},
		{"queue_commits", func(c *Config) { c.QueueCommits = -1 }},
		{"max_payload_bytes", func(c *Config) { c.MaxPayloadBytes = 1023 }},
		{"max_payload_bytes", func(c *Config) { c.MaxPayloadBytes = 49153 }},
		{"clock_skew", func(c *Config) { c.ClockSkew = -time.Second }},
		{"clock_skew", func(c *Config) { c.ClockSkew = 61 * time.Minute }},
		{"commit_timeout", func(c *Config) { c.CommitTimeout = 99 * time.Millisecond }},
		{"commit_timeout", func(c *Config) { c.CommitTimeout = 31 * time.Second }},
		{"group_commit_max", func(c *Config) { c.GroupCommitMax = 0 }},
		{"group_commit_max", func(c *Config) { c.GroupCommitMax = 4097 }},
		{"segment_records", func(c *Config) { c.SegmentRecords = 300 }},
		{"segment_records", func(c *Config) { c.SegmentRecords = 0 }},
		{"segment_records", func(c *Config) { c.SegmentRecords = 65536 + 256 }},
		{"checkpoint_max_lag", func(c *Config) { c.CheckpointMaxLag = 999 * time.Millisecond }},
		{"retention_policy", func(c *Config) { c.RetentionPolicy = "by-luck" }},
		{"retention_max_age", func(c *Config) { c.RetentionMaxAge = 59 * time.Minute }},
		{"retention_max_count", func(c *Config) { c.RetentionMaxCount = 99 }},
		{"retention_target_bytes", func(c *Config) { c.RetentionTargetBytes = 32<<20 - 1 }},
		{"retention_interval", func(c *Config) { c.RetentionInterval = 59 * time.Second }},
		{"verify_slice", func(c *Config) { c.VerifySlice = 999 * time.Microsecond }},
		{"verify_slice", func(c *Config) { c.VerifySlice = 1001 * time.Millisecond }},
		{"verify_full_interval", func(c *Config) { c.VerifyFullInterval = 59 * time.Minute }},
		{"stream_heartbeat", func(c *Config) { c.StreamHeartbeat = 999 * time.Millisecond }},
		{"stream_heartbeat", func(c *Config) { c.StreamHeartbeat = 61 * time.Second }},
		{"stream_max_clients", func(c *Config) { c.StreamMaxClients = 0 }},
		{"stream_max_clients", func(c *Config) { c.StreamMaxClients = 65537 }},
		{"stream_max_lag", func(c *Config) { c.StreamMaxLag = 15 }},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), "registry."+tc.key+": ") {
			t.Errorf("%s: got %v", tc.key, err)
		}
	}
	for _, edit := range []func(*Config){
		func(c *Config) { c.SegmentRecords, c.StreamMaxLag = 65536, 16 },
		func(c *Config) { c.TrustRoots, c.TrustRootsB3 = "f", "b3:"+strings.Repeat("0", 64) },
		func(c *Config) { c.LogOrigin, c.AdvertiseURL = "registry.example.com/ron", "https://r.example:9444" },
		func(c *Config) { c.RetentionPolicy, c.MaxPayloadBytes, c.ClockSkew = PolicyOff, 1024, 0 },
	} {
		c := DefaultConfig()
		edit(&c)
		if err := c.Validate(); err != nil {
			t.Errorf("valid config refused: %v", err)
		}
	}
}

func TestApplyLiveAndRestartOnly(t *testing.T) {
	n := startNode(t, testOptions(t, testConfig(), ""), nil, 0)
	cur := n.config()
	for _, tc := range []struct {
		name   string
		edit   func(*Config)
		reason string // "" = accepted
		keys   []string
	}{
		{"listen", func(c *Config) { c.Listen = "127.0.0.1:1" }, reloadRestart, []string{"registry.listen"}},
		{"trust roots", func(c *Config) { c.TrustRoots = "/etc/roots.json" }, reloadForbidden, []string{"registry.trust_roots"}},
		{"pin", func(c *Config) { c.TrustRoots, c.TrustRootsB3 = "x", "b3:"+strings.Repeat("1", 64) }, reloadForbidden,
			[]string{"registry.trust_roots", "registry.trust_roots_b3"}},
		{"restart keys", func(c *Config) {
			c.AllowDevSigner, c.LogOrigin, c.QueueProposals, c.QueueApprovals, c.QueueCommits, c.SegmentRecords =
				false, "o", 1, 2, 3, 512
		}, reloadRestart, []string{"registry.allow_dev_signer", "registry.log_origin", "registry.queue_proposals",
			"registry.queue_approvals", "registry.queue_commits", "registry.segment_records"}},
		{"invalid", func(c *Config) { c.StreamMaxLag = 1 }, reloadInvalid, []string{"registry.stream_max_lag"}},
		{"live keys", func(c *Config) {
			c.AdvertiseURL, c.MaxInflight, c.RPS, c.PublicReads, c.CommitTimeout = "http://r.example", 10, 5, false, time.Second
			c.ProposalTTL, c.TombstoneTTL, c.MaxOpenProposals, c.MaxPayloadBytes, c.ClockSkew = time.Hour, 2*time.Hour, 7, 2048, 0
			c.GroupCommitMax, c.CheckpointMaxLag, c.RetentionPolicy, c.RetentionMaxCount = 8, time.Hour, PolicyByCount, 500
			c.VerifySlice, c.VerifyFullInterval, c.StreamHeartbeat, c.StreamMaxClients = time.Second, 2*time.Hour, time.Second, 3
		}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := cur
			tc.edit(&next)
			before := n.metric(`ron_registry_reload_fail_total{role="registry",reason="` + tc.reason + `"}`)
			err := n.Apply(next)
			if tc.reason == "" {
				if err != nil || n.config() != next {
					t.Fatalf("Apply: %v", err)
				}
				if s := n.settings(); s.PublicReads || s.CommitTimeout != time.Second || s.Limits.MaxPayloadBytes != 2048 {
					t.Fatalf("settings not live: %+v", s)
				}
				if l := n.config().limits(); l.GroupCommitMax != 8 || l.MaxOpenProposals != 7 {
					t.Fatalf("committer limits not live: %+v", l)
				}
				if err := n.Apply(cur); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, k := range tc.keys {
				if err == nil || !strings.Contains(err.Error(), k) {
					t.Fatalf("Apply: %v, want it to name %s", err, k)
				}
			}
			if n.metric(`ron_registry_reload_fail_total{role="registry",reason="`+tc.reason+`"}`) != before+1 {
				t.Fatal("reload failure not counted")
			}
			if n.config() != cur {
				t.Fatal("a rejected reload changed the config")
			}
		})
	}
	if err := n.Apply(DefaultConfig().Listen); err == nil {
		t.Fatal("Apply of a string")
	}
}

func TestApplyReadOnly(t *testing.T) {
	n := startNode(t, testOptions(t, testConfig(), ""), nil, 0)
	cfg := n.config()
	cfg.ReadOnly = true
	if err := n.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if got := n.com.WriteUnready(); !slices.Equal(got, []string{committer.ReasonMaintenance}) {
		t.Fatalf("frozen: %v", got)
	}
	if st := n.statusBody(); !st.ReadOnly || st.WriteReady {
		t.Fatalf("status while frozen: %+v", st)
	}
	cfg.ReadOnly = false
	if err := n.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if got := n.com.WriteUnready(); len(got) != 0 {
		t.Fatalf("unfrozen: %v", got)
	}
	n.commit("after the freeze")
	for _, ev := range []string{eventFreeze, eventUnfreeze} {
		if v := n.metric(`ron_registry_audit_events_total{role="registry",event="` + ev + `"}`); v != 1 {
			t.Fatalf("%s events: %v", ev, v)
		}
	}
	if v := n.metric(`ron_registry_reload_success_total{role="registry",source="reload"}`); v != 2 {
		t.Fatalf("reload successes %v", v)
	}
}

func TestStartReadOnly(t *testing.T) {
	cfg := testConfig()
	cfg.ReadOnly = true
	n := startNode(t, testOptions(t, cfg, ""), nil, 0)
	if got := n.com.WriteUnready(); !slices.Equal(got, []string{committer.ReasonMaintenance}) {
		t.Fatalf("unready %v", got)
	}
}
