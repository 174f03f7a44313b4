package storage

import (
	"strings"
	"testing"
)

// TestConfigValidateRedundancy: replication_factor 1–5, redundancy
// replicas|ec, ec_data + ec_parity ≤ 32.
func TestConfigValidateRedundancy(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Config)
		want string // "" = valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"RF 1", func(c *Config) { c.ReplicationFactor = 1 }, ""},
		{"RF 5", func(c *Config) { c.ReplicationFactor = 5 }, ""},
		{"RF 0", func(c *Config) { c.ReplicationFactor = 0 }, "replication_factor"},
		{"RF 6", func(c *Config) { c.ReplicationFactor = 6 }, "replication_factor"},
		{"RF negative", func(c *Config) { c.ReplicationFactor = -2 }, "replication_factor"},
		{"ec accepted", func(c *Config) { c.Redundancy = RedundancyEC }, ""},
		{"unknown redundancy", func(c *Config) { c.Redundancy = "raid" }, "redundancy"},
		{"empty redundancy", func(c *Config) { c.Redundancy = "" }, "redundancy"},
		{"32 shards", func(c *Config) { c.ECData, c.ECParity = 24, 8 }, ""},
		{"33 shards", func(c *Config) { c.ECData, c.ECParity = 30, 3 }, "ec_data + ec_parity"},
		{"no data shards", func(c *Config) { c.ECData = 0 }, "ec_data"},
		{"no parity", func(c *Config) { c.ECParity = 0 }, "ec_parity"},
		{"negative ec_min_bytes", func(c *Config) { c.ECMinBytes = -1 }, "ec_min_bytes"},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		c.mod(&cfg)
		err := cfg.Validate()
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestRedundancyKeysNeedRestart: every new key is restart-only.
func TestRedundancyKeysNeedRestart(t *testing.T) {
	mods := map[string]func(*Config){
		"storage.replication_factor": func(c *Config) { c.ReplicationFactor = 3 },
		"storage.redundancy":         func(c *Config) { c.Redundancy = RedundancyEC },
		"storage.ec_data":            func(c *Config) { c.ECData = 4 },
		"storage.ec_parity":          func(c *Config) { c.ECParity = 2 },
		"storage.ec_min_bytes":       func(c *Config) { c.ECMinBytes = 1 << 20 },
	}
	for key, mod := range mods {
		old, n := DefaultConfig(), DefaultConfig()
		mod(&n)
		if got := old.restartOnly(n); len(got) != 1 || got[0] != key {
			t.Errorf("%s: restartOnly = %v", key, got)
		}
	}
}
