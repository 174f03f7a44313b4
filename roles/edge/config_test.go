package edge

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/runtime/config"
)

// section wraps Config the way the root config does, for loading TOML.
type section struct {
	Edge Config `koanf:"edge"`
}

func loadTOML(t *testing.T, text string) (Config, error) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "ron.toml")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s := section{Edge: DefaultConfig()}
	err := config.Load(&s, config.Sources{File: file})
	return s.Edge, err
}

func TestDefaultsValidate(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	checks := []struct {
		key       string
		got, want any
	}{
		{"listen", c.Listen, "127.0.0.1:8081"}, {"max_inflight", c.MaxInflight, 512}, {"rps", c.RPS, 0.0},
		{"max_conns_per_ip", c.MaxConnsPerIP, 256}, {"max_providers", c.MaxProviders, 3},
		{"request_timeout", c.RequestTimeout, 5 * time.Second}, {"body_max_bytes", c.BodyMaxBytes, config.Size(1 << 20)},
		{"cors_origins", c.CORSOrigins, []string{"*"}}, {"cache_max_bytes", c.CacheMaxBytes, config.Size(1 << 30)},
		{"amnesia_cache_max_bytes", c.AmnesiaCacheMaxBytes, config.Size(256 << 20)},
		{"fill_max_bytes", c.FillMaxBytes, config.Size(64 << 20)}, {"fill_workers", c.FillWorkers, 32},
		{"fill_queue_cap", c.FillQueueCap, 512}, {"fill_timeout", c.FillTimeout, 5 * time.Second},
		{"fill_max_tries", c.FillMaxTries, 3}, {"heuristic_max_ttl", c.HeuristicMaxTTL, 24 * time.Hour},
		{"stale_if_unreachable", c.StaleIfUnreachable, time.Minute}, {"max_variants", c.MaxVariants, 16},
		{"verify_packs", c.VerifyPacks, "basic"}, {"pack_errors", c.PackErrors, "fail"},
		{"pack_poll_interval", c.PackPollInterval, 2 * time.Second},
		{"quick_check_max_bytes", c.QuickCheckMaxBytes, config.Size(64 << 20)},
		{"dir_cache_bytes", c.DirCacheBytes, config.Size(64 << 20)},
		{"tile_max_decoded_bytes", c.TileMaxDecodedBytes, config.Size(8 << 20)}, {"max_ranges", c.MaxRanges, 128},
		{"tiles_cache_control", c.TilesCacheControl, "public, max-age=60"},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %v, want %v", ch.key, ch.got, ch.want)
		}
	}
}

// TestValidateBadInput is the table of refused [edge] settings: each error
// names the key.
func TestValidateBadInput(t *testing.T) {
	three := 3
	rows := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"storage_url not http", func(c *Config) { c.StorageURL = "ftp://s.example" }, "edge.storage_url"},
		{"index_url with query", func(c *Config) { c.IndexURL = "http://i.example/?a=1" }, "edge.index_url"},
		{"advertise_url with user", func(c *Config) { c.AdvertiseURL = "http://u:p@e.example" }, "edge.advertise_url"},
		{"public_url without host", func(c *Config) { c.PublicURL = "https://" }, "edge.public_url"},
		{"max_providers 0", func(c *Config) { c.MaxProviders = 0 }, "edge.max_providers"},
		{"max_providers above the index limit", func(c *Config) { c.MaxProviders = 65 }, "edge.max_providers"},
		{"body_max_bytes 0", func(c *Config) { c.BodyMaxBytes = 0 }, "edge.body_max_bytes"},
		{"cache_max_bytes 0", func(c *Config) { c.CacheMaxBytes = 0 }, "edge.cache_max_bytes"},
		{"amnesia budget 0", func(c *Config) { c.AmnesiaCacheMaxBytes = 0 }, "edge.amnesia_cache_max_bytes"},
		{"fill_max_bytes 0", func(c *Config) { c.FillMaxBytes = 0 }, "edge.fill_max_bytes"},
		{"fill_workers 0", func(c *Config) { c.FillWorkers = 0 }, "edge.fill_workers"},
		{"fill_queue_cap 0", func(c *Config) { c.FillQueueCap = 0 }, "edge.fill_queue_cap"},
		{"fill_max_tries 0", func(c *Config) { c.FillMaxTries = 0 }, "edge.fill_max_tries"},
		{"fill_max_tries 11", func(c *Config) { c.FillMaxTries = 11 }, "edge.fill_max_tries"},
		{"max_variants 0", func(c *Config) { c.MaxVariants = 0 }, "edge.max_variants"},
		{"dir_cache_bytes 0", func(c *Config) { c.DirCacheBytes = 0 }, "edge.dir_cache_bytes"},
		{"tile_max_decoded_bytes 0", func(c *Config) { c.TileMaxDecodedBytes = 0 }, "edge.tile_max_decoded_bytes"},
		{"max_ranges 0", func(c *Config) { c.MaxRanges = 0 }, "edge.max_ranges"},
		{"request_timeout 0", func(c *Config) { c.RequestTimeout = 0 }, "edge.request_timeout"},
		{"request_timeout 2h", func(c *Config) { c.RequestTimeout = 2 * time.Hour }, "edge.request_timeout"},
		{"fill_timeout negative", func(c *Config) { c.FillTimeout = -time.Second }, "edge.fill_timeout"},
		{"heuristic_max_ttl 0", func(c *Config) { c.HeuristicMaxTTL = 0 }, "edge.heuristic_max_ttl"},
		{"pack_poll_interval 0", func(c *Config) { c.PackPollInterval = 0 }, "edge.pack_poll_interval"},
		{"stale_if_unreachable negative", func(c *Config) { c.StaleIfUnreachable = -1 }, "edge.stale_if_unreachable"},
		{"verify_packs", func(c *Config) { c.VerifyPacks = "paranoid" }, "edge.verify_packs"},
		{"pack_errors", func(c *Config) { c.PackErrors = "ignore" }, "edge.pack_errors"},
		{"pack of another kind", func(c *Config) { c.Packs = []string{"/data/world.zip"} }, "edge.packs"},
		{"pack name", func(c *Config) { c.Packs = []string{"/data/-world.pmtiles"} }, "edge.packs"},
		{"tiles_cache_control with a newline", func(c *Config) { c.TilesCacheControl = "public\nx: y" }, "edge.tiles_cache_control"},
		{"tiles_cache_control empty", func(c *Config) { c.TilesCacheControl = "" }, "edge.tiles_cache_control"},
		{"cors origin with a path", func(c *Config) { c.CORSOrigins = []string{"https://app.example/x"} }, "edge.cors_origins"},
		{"trusted proxy", func(c *Config) { c.TrustedProxy = []string{"10.0.0.0/33"} }, "edge.trusted_proxies"},
		{"origin name", func(c *Config) { c.Origins = []OriginConfig{{Name: "Tiles", URL: "https://t.example"}} }, "edge.origins"},
		{"origin name twice", func(c *Config) {
			c.Origins = []OriginConfig{{Name: "t", URL: "https://t.example"}, {Name: "t", URL: "https://u.example"}}
		}, "listed twice"},
		{"origin http without allow_insecure", func(c *Config) { c.Origins = []OriginConfig{{Name: "t", URL: "http://127.0.0.1:1"}} }, "edge.origins"},
		{"origin http on a remote host", func(c *Config) {
			c.Origins = []OriginConfig{{Name: "t", URL: "http://t.example", AllowInsecure: true}}
		}, "edge.origins"},
		{"origin with a query", func(c *Config) { c.Origins = []OriginConfig{{Name: "t", URL: "https://t.example/?a=b"}} }, "edge.origins"},
		{"origin default_ttl negative", func(c *Config) {
			c.Origins = []OriginConfig{{Name: "t", URL: "https://t.example", DefaultTTL: -time.Second}}
		}, "default_ttl"},
		{"origin max_tries 0", func(c *Config) {
			zero := 0
			c.Origins = []OriginConfig{{Name: "t", URL: "https://t.example", MaxTries: &zero}}
		}, "max_tries"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Origins = []OriginConfig{{Name: "ok", URL: "https://ok.example", MaxTries: &three}}
			row.change(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), row.want) {
				t.Fatalf("Validate = %v, want an error mentioning %q", err, row.want)
			}
		})
	}
}

// TestCheckSources: storage_url / index_url while that role is co-located
// is a config error (one source of truth); otherwise fine.
func TestCheckSources(t *testing.T) {
	colocated := func(roles ...string) func(string) bool {
		return func(r string) bool { return strings.Contains(strings.Join(roles, ","), r) }
	}
	c := DefaultConfig()
	c.StorageURL, c.IndexURL = "http://10.0.0.2:5303", "http://10.0.0.2:5304"
	if err := c.CheckSources(colocated()); err != nil {
		t.Fatalf("URLs without co-located roles: %v", err)
	}
	for _, role := range []string{"storage", "index"} {
		err := c.CheckSources(colocated(role))
		if err == nil || !strings.Contains(err.Error(), "edge."+role+"_url") || !strings.Contains(err.Error(), "one source of truth") {
			t.Errorf("%s co-located: %v", role, err)
		}
	}
}

// TestOriginTables: [[edge.origins]] load from TOML with their defaults,
// print back as inline tables and load again to the same value.
func TestOriginTables(t *testing.T) {
	text := "[edge]\n\n[[edge.origins]]\nname = \"tiles\"\nurl = \"https://tiles.example/base\"\ndefault_ttl = \"90s\"\n" +
		"max_tries = 1\nhonor_request_cache_control = false\n\n[[edge.origins]]\nname = \"local\"\nurl = \"http://127.0.0.1:18000\"\n" +
		"allow_insecure = true\nforward_unsafe = true\nforward_authorization = true\n"
	c, err := loadTOML(t, text)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	ls, err := c.liveSettings()
	if err != nil {
		t.Fatal(err)
	}
	a, b := ls.Origins[0], ls.Origins[1]
	if a.Name != "tiles" || a.URL.String() != "https://tiles.example/base" || a.DefaultTTL != 90*time.Second ||
		a.MaxTries != 1 || a.HonorRequestCacheControl || a.ForwardUnsafe {
		t.Errorf("first origin %+v", a)
	}
	if b.Name != "local" || !b.AllowInsecure || !b.ForwardUnsafe || !b.ForwardAuthorization || b.MaxTries != 3 ||
		!b.HonorRequestCacheControl || b.DefaultTTL != 0 {
		t.Errorf("second origin (defaults) %+v", b)
	}
	printed := config.TOML(&section{Edge: c}, false)
	back, err := loadTOML(t, printed)
	if err != nil || !reflect.DeepEqual(back, c) {
		t.Fatalf("reloaded %+v, %v\nfrom\n%s", back.Origins, err, printed)
	}
	if _, err := loadTOML(t, "[[edge.origins]]\nname = \"x\"\nurl = \"https://x.example\"\nttl = 3\n"); err == nil ||
		!strings.Contains(err.Error(), "ttl") {
		t.Fatalf("unknown origin key: %v", err)
	}
}

func TestSecretRedacted(t *testing.T) {
	c := DefaultConfig()
	c.UpstreamToken = "s3cret-token"
	if out := config.TOML(&section{Edge: c}, true); strings.Contains(out, "s3cret-token") {
		t.Fatalf("upstream_token printed:\n%s", out)
	}
}

func TestRestartOnlyKeys(t *testing.T) {
	c := DefaultConfig()
	for _, row := range []struct {
		key    string
		change func(*Config)
	}{
		{"edge.listen", func(c *Config) { c.Listen = "127.0.0.1:1" }},
		{"edge.storage_url", func(c *Config) { c.StorageURL = "http://s.example" }},
		{"edge.index_url", func(c *Config) { c.IndexURL = "http://i.example" }},
		{"edge.fill_workers", func(c *Config) { c.FillWorkers = 1 }},
		{"edge.fill_queue_cap", func(c *Config) { c.FillQueueCap = 1 }},
	} {
		n := c
		row.change(&n)
		if got := c.restartOnly(n); !reflect.DeepEqual(got, []string{row.key}) {
			t.Errorf("%s: restartOnly = %v", row.key, got)
		}
	}
	n := c
	n.CacheMaxBytes, n.RPS, n.TilesCacheControl, n.UpstreamToken = 1<<20, 5, "no-cache", "t"
	n.Origins = []OriginConfig{{Name: "o", URL: "https://o.example"}}
	if got := c.restartOnly(n); len(got) != 0 {
		t.Errorf("live keys reported as restart-only: %v", got)
	}
}

func TestPacksDir(t *testing.T) {
	data := t.TempDir()
	c := DefaultConfig()
	if got, optional := c.packsDir(data); got != filepath.Join(data, "packs") || !optional {
		t.Errorf("default: %q optional %v, want <data>/packs, optional", got, optional)
	}
	if got, _ := c.packsDir(""); got != "" {
		t.Errorf("no data dir: %q", got)
	}
	c.PacksDir = "/srv/packs"
	if got, optional := c.packsDir(data); got != "/srv/packs" || optional {
		t.Errorf("packs_dir set: %q optional %v", got, optional)
	}
	if c.cacheBudget(true) != 256<<20 || c.cacheBudget(false) != 1<<30 {
		t.Errorf("cache budgets %d %d", c.cacheBudget(true), c.cacheBudget(false))
	}
}
