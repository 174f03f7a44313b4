package cluster

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDefaultConfigValid(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.Enabled = true
	if err := c.Validate(); err != nil {
		t.Fatalf("default config with cluster mode on: %v", err)
	}
}

func TestConfigValidateRejects(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
		key  string
	}{
		{"node id", func(c *Config) { c.NodeID = "a/b" }, "node_id"},
		{"zone", func(c *Config) { c.Zone = "eu 1" }, "zone"},
		{"profile", func(c *Config) { c.Profile = "wan" }, "profile"},
		{"listen not host:port", func(c *Config) { c.Listen = "127.0.0.1" }, "listen"},
		{"listen port", func(c *Config) { c.Listen = "127.0.0.1:0" }, "listen"},
		{"unspecified listen without advertise", func(c *Config) { c.Enabled, c.Listen = true, "0.0.0.0:7946" }, "advertise"},
		{"empty listen host without advertise", func(c *Config) { c.Enabled, c.Listen = true, ":7946" }, "advertise"},
		{"advertise not an IP", func(c *Config) { c.Advertise = "host:7946" }, "advertise"},
		{"advertise unspecified", func(c *Config) { c.Advertise = "0.0.0.0:7946" }, "advertise"},
		{"join", func(c *Config) { c.Join = []string{"10.0.0.1"} }, "join"},
		{"repair_after", func(c *Config) { c.RepairAfter = 9 * time.Second }, "repair_after"},
		{"forget_after", func(c *Config) { c.ForgetAfter = time.Minute }, "forget_after"},
		{"repair_interval", func(c *Config) { c.RepairInterval = 0 }, "repair_interval"},
		{"repair_batch", func(c *Config) { c.RepairBatch = 1001 }, "repair_batch"},
		{"repair_scan_rate", func(c *Config) { c.RepairScanRate = 0 }, "repair_scan_rate"},
		{"repair_workers", func(c *Config) { c.RepairWorkers = 65 }, "repair_workers"},
		{"repair_per_target", func(c *Config) { c.RepairPerTarget = 0 }, "repair_per_target"},
		{"repair_pace", func(c *Config) { c.RepairPace = 0 }, "repair_pace"},
		{"repair_queue", func(c *Config) { c.RepairQueue = 0 }, "repair_queue"},
		{"replica_stall_timeout", func(c *Config) { c.ReplicaStallTimeout = 0 }, "replica_stall_timeout"},
		{"index_replicas", func(c *Config) { c.IndexReplicas = 8 }, "index_replicas"},
		{"bootstrap_expect range", func(c *Config) { c.Server, c.BootstrapExpect = true, 8 }, "bootstrap_expect"},
		{"bootstrap_expect negative", func(c *Config) { c.Server, c.BootstrapExpect = true, -1 }, "bootstrap_expect"},
		{"bootstrap_expect without server", func(c *Config) { c.BootstrapExpect = 3 }, "bootstrap_expect"},
		{"server_remove_after", func(c *Config) { c.ServerRemoveAfter = 9 * time.Second }, "server_remove_after"},
		{"raft_listen", func(c *Config) { c.RaftListen = "127.0.0.1" }, "raft_listen"},
		{"raft_listen port", func(c *Config) { c.RaftListen = "127.0.0.1:70000" }, "raft_listen"},
		{"no next port for raft", func(c *Config) { c.Listen = "127.0.0.1:65535" }, "raft_listen"},
		{"raft_advertise not an IP", func(c *Config) { c.RaftAdvertise = "host:7947" }, "raft_advertise"},
		{"raft_advertise unspecified", func(c *Config) { c.RaftAdvertise = "[::]:7947" }, "raft_advertise"},
		{"unspecified raft listener without advertise", func(c *Config) { c.Enabled, c.RaftListen = true, "0.0.0.0:7947" }, "raft_advertise"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			err := c.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), "cluster."+tc.key+":") {
				t.Fatalf("Validate = %v, want a cluster.%s error", err, tc.key)
			}
		})
	}
}

func TestConfigValidateAccepts(t *testing.T) {
	c := DefaultConfig()
	c.Enabled, c.Listen, c.Advertise = true, "0.0.0.0:7946", "10.0.0.1:7946"
	c.Join, c.Zone, c.NodeID = []string{"10.0.0.2:7946", "seed.example:7946"}, "eu-1", "node-a"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestRaftAddresses: the Raft listener defaults to cluster.listen's host
// with the next port, and its advertised address to cluster.advertise's
// host with that port; explicit keys win; port 0 means any free port (the
// bound address is gossiped).
func TestRaftAddresses(t *testing.T) {
	cases := []struct {
		name      string
		edit      func(*Config)
		bind, adv string
	}{
		{"defaults", func(*Config) {}, "127.0.0.1:7947", ""},
		{"from advertise", func(c *Config) { c.Listen, c.Advertise = "0.0.0.0:8000", "10.0.0.1:8000" }, "0.0.0.0:8001", "10.0.0.1:8001"},
		{"explicit", func(c *Config) { c.RaftListen, c.RaftAdvertise = "0.0.0.0:9000", "10.0.0.2:9100" }, "0.0.0.0:9000", "10.0.0.2:9100"},
		{"any port", func(c *Config) { c.RaftListen, c.Advertise = "127.0.0.1:0", "10.0.0.1:7946" }, "127.0.0.1:0", ""},
	}
	for _, tc := range cases {
		c := DefaultConfig()
		tc.edit(&c)
		if err := c.Validate(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		bind, _ := c.RaftBind()
		adv, _ := c.RaftAdvertiseAddr()
		if bind != tc.bind || adv != tc.adv {
			t.Errorf("%s: bind %q advertise %q, want %q %q", tc.name, bind, adv, tc.bind, tc.adv)
		}
	}
}

func TestNodeScopes(t *testing.T) {
	pub := NodeScopes(false)
	if !slices.Contains(pub, "storage:replicate") || !slices.Contains(pub, "index:replicate") || slices.Contains(pub, "storage:read") {
		t.Fatalf("NodeScopes(false) = %v", pub)
	}
	priv := NodeScopes(true)
	if len(priv) != len(pub)+2 || !slices.Contains(priv, "storage:read") || !slices.Contains(priv, "index:read") {
		t.Fatalf("NodeScopes(true) = %v", priv)
	}
}
