package index

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/runtime/config"
)

// specKeys are the [index] keys of docs/index.md §12, in the table's order.
var specKeys = []string{"listen", "advertise_url", "max_inflight", "rps", "max_conns_per_ip", "peers", "alpha",
	"beta", "hedge_ms", "deadline_ms", "retry_max", "retry_jitter_ms", "breaker_window", "breaker_bucket",
	"breaker_min_requests", "breaker_trip_ratio", "breaker_cooldown", "breaker_half_open", "cache_entries",
	"cache_ttl", "neg_cache_ttl", "queue_capacity", "workers", "queue_timeout", "ratelimit_rps",
	"ratelimit_burst", "name_history", "provider_ttl_default", "provider_ttl_max", "providers_per_object",
	"janitor_interval", "janitor_batch", "public_reads", "compat_routes"}

func TestConfigKeysAndDefaults(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range config.Fields(&c) {
		keys = append(keys, f.Key)
		if f.Help == "" {
			t.Errorf("key %s has no help", f.Key)
		}
	}
	slices.Sort(keys)
	want := slices.Sorted(slices.Values(specKeys))
	if !slices.Equal(keys, want) {
		t.Fatalf("keys %v\nwant %v", keys, want)
	}
	if c.Listen != "127.0.0.1:5304" || c.MaxInflight != 512 || c.MaxConnsPerIP != 256 || c.RPS != 0 ||
		c.DeadlineMS != 1200 || c.HedgeMS != 150 || c.RetryJitterMS != (MillisRange{50, 100}) ||
		c.BreakerBucket != 3*time.Second || c.BreakerMinRequests != 20 || c.Workers != 256 ||
		c.QueueTimeout != time.Second || c.RatelimitBurst != 200 || !c.PublicReads || c.CompatRoutes {
		t.Fatalf("defaults %+v", c)
	}
}

func TestConfigRejects(t *testing.T) {
	cases := []struct {
		key string
		set func(*Config)
	}{
		{"alpha", func(c *Config) { c.Alpha = 0 }},
		{"beta", func(c *Config) { c.Beta = -1 }},
		{"hedge_ms", func(c *Config) { c.HedgeMS = 1200 }},
		{"hedge_ms", func(c *Config) { c.HedgeMS = -1 }},
		{"deadline_ms", func(c *Config) { c.DeadlineMS = 0 }},
		{"retry_max", func(c *Config) { c.RetryMax = -1 }},
		{"retry_jitter_ms", func(c *Config) { c.RetryJitterMS = MillisRange{100, 50} }},
		{"retry_jitter_ms", func(c *Config) { c.RetryJitterMS = MillisRange{0, 50} }},
		{"retry_jitter_ms", func(c *Config) { c.RetryJitterMS = MillisRange{-5, 50} }},
		{"retry_jitter_ms", func(c *Config) { c.RetryJitterMS = MillisRange{50, 1200} }},
		{"breaker_window", func(c *Config) { c.BreakerWindow = 0 }},
		{"breaker_bucket", func(c *Config) { c.BreakerBucket = time.Minute }},
		{"breaker_min_requests", func(c *Config) { c.BreakerMinRequests = 0 }},
		{"breaker_trip_ratio", func(c *Config) { c.BreakerTripRatio = 0 }},
		{"breaker_trip_ratio", func(c *Config) { c.BreakerTripRatio = 1.5 }},
		{"breaker_cooldown", func(c *Config) { c.BreakerCooldown = -time.Second }},
		{"breaker_half_open", func(c *Config) { c.BreakerHalfOpen = 0 }},
		{"cache_entries", func(c *Config) { c.CacheEntries = 0 }},
		{"cache_ttl", func(c *Config) { c.CacheTTL = 0 }},
		{"neg_cache_ttl", func(c *Config) { c.NegCacheTTL = 0 }},
		{"queue_capacity", func(c *Config) { c.QueueCapacity = 0 }},
		{"workers", func(c *Config) { c.Workers = 0 }},
		{"queue_timeout", func(c *Config) { c.QueueTimeout = 0 }},
		{"ratelimit_rps", func(c *Config) { c.RatelimitRPS = -1 }},
		{"ratelimit_burst", func(c *Config) { c.RatelimitBurst = 0 }},
		{"name_history", func(c *Config) { c.NameHistory = 0 }},
		{"provider_ttl_max", func(c *Config) { c.ProviderTTLMax = 1500 * time.Millisecond }},
		{"provider_ttl_default", func(c *Config) { c.ProviderTTLDefault = 0 }},
		{"provider_ttl_default", func(c *Config) { c.ProviderTTLDefault = 48 * time.Hour }},
		{"providers_per_object", func(c *Config) { c.ProvidersPerObject = 0 }},
		{"janitor_interval", func(c *Config) { c.JanitorInterval = 0 }},
		{"janitor_batch", func(c *Config) { c.JanitorBatch = 0 }},
		{"advertise_url", func(c *Config) { c.AdvertiseURL = "ftp://x" }},
		{"peers", func(c *Config) { c.Peers = []string{"http://a:1", "http://A:1/"} }},
		{"peers", func(c *Config) { c.Peers = []string{"http://u:p@a:1"} }},
		{"peers", func(c *Config) { c.Peers = []string{"http://a:1/?q=1"} }},
		{"peers", func(c *Config) { c.Peers = []string{"a:1"} }},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			c := DefaultConfig()
			tc.set(&c)
			err := c.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), "index."+tc.key+":") {
				t.Fatalf("got %v, want an error naming index.%s", err, tc.key)
			}
		})
	}
}

func TestConfigLoadsFromTOMLAndEnv(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ron.toml")
	toml := "[index]\npeers = [\"http://10.0.0.2:5304\", \"http://10.0.0.3:5304\"]\n" +
		"retry_jitter_ms = [20, 40]\nbreaker_trip_ratio = 0.75\nqueue_timeout = \"250ms\"\npublic_reads = false\n"
	if err := os.WriteFile(file, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	root := struct {
		Index Config `koanf:"index"`
	}{DefaultConfig()}
	env := []string{"RON_INDEX__RATELIMIT_RPS=12.5", "RON_INDEX__HEDGE_MS=100"}
	if err := config.Load(&root, config.Sources{File: file, Environ: env}); err != nil {
		t.Fatal(err)
	}
	c := root.Index
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(c.Peers) != 2 || c.RetryJitterMS != (MillisRange{20, 40}) || c.BreakerTripRatio != 0.75 ||
		c.QueueTimeout != 250*time.Millisecond || c.PublicReads || c.RatelimitRPS != 12.5 || c.HedgeMS != 100 {
		t.Fatalf("loaded %+v", c)
	}
	root.Index = DefaultConfig()
	if err := config.Load(&root, config.Sources{Environ: []string{"RON_INDEX__RETRY_JITTER_MS=60,90"}}); err != nil {
		t.Fatal(err)
	}
	if root.Index.RetryJitterMS != (MillisRange{60, 90}) {
		t.Fatalf("env retry_jitter_ms %v", root.Index.RetryJitterMS)
	}
}

func TestMillisRangeText(t *testing.T) {
	for _, bad := range []string{"", "50", "a,b", "50,", ",50", "50;100", "1,2,3"} {
		var m MillisRange
		if err := m.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("UnmarshalText(%q) = %v, want an error", bad, m)
		}
	}
	var m MillisRange
	if err := m.UnmarshalText([]byte(" [ 5, 7 ] ")); err != nil || m != (MillisRange{5, 7}) {
		t.Fatalf("got %v %v", m, err)
	}
	if b, _ := m.MarshalText(); string(b) != "5,7" {
		t.Fatalf("MarshalText %q", b)
	}
}

func TestOnlyListenNeedsRestart(t *testing.T) {
	a := DefaultConfig()
	b := a
	b.Peers = []string{"http://x:1"}
	b.Workers, b.PublicReads, b.AdvertiseURL, b.CompatRoutes = 8, false, "http://me:1", true
	if keys := a.restartOnly(b); len(keys) != 0 {
		t.Fatalf("restart keys %v", keys)
	}
	b.Listen = "127.0.0.1:1"
	if keys := a.restartOnly(b); !slices.Equal(keys, []string{"index.listen"}) {
		t.Fatalf("restart keys %v", keys)
	}
}
