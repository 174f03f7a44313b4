package edge

import (
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/edge/edgeapi"
	"github.com/ronhq/ron/runtime/config"
)

// roleName is the edge's name in the role table, logs and metric labels.
const roleName = edgeapi.RoleName

// Config is the [edge] section (docs/edge.md §10). Every key but listen,
// storage_url, index_url, fill_workers and fill_queue_cap can change live
// (Role.Apply).
type Config struct {
	Listen        string `koanf:"listen" help:"edge listener address (restart to change)"`
	AdvertiseURL  string `koanf:"advertise_url" help:"URL other nodes and clients use; http://<listen> when empty"`
	httpx.Ingress `koanf:",squash"`

	StorageURL    string `koanf:"storage_url" help:"storage or gateway base URL for /o fills when storage is not co-located (restart to change)"`
	IndexURL      string `koanf:"index_url" help:"index base URL for /o providers when the index is not co-located (restart to change)"`
	MaxProviders  int    `koanf:"max_providers" help:"index providers tried per /o fill"`
	UpstreamToken string `koanf:"upstream_token" secret:"true" help:"bearer token sent to HTTP /o sources instead of a minted one"`

	RequestTimeout time.Duration `koanf:"request_timeout" help:"handler deadline (to the first byte of a streamed body); a shorter Request-Timeout wins"`
	BodyMaxBytes   config.Size   `koanf:"body_max_bytes" help:"largest request body forwarded to an origin"`
	TrustedProxy   []string      `koanf:"trusted_proxies" help:"CIDRs whose X-Forwarded-* headers are believed"`
	PublicURL      string        `koanf:"public_url" help:"base URL of the tiles in TileJSON; empty = from the request"`
	CORSOrigins    []string      `koanf:"cors_origins" help:"origins allowed to read /o, /packs and /tiles cross-origin (\"*\" = any)"`

	CacheMaxBytes        config.Size `koanf:"cache_max_bytes" help:"cache budget on disk (<data dir>/edge)"`
	AmnesiaCacheMaxBytes config.Size `koanf:"amnesia_cache_max_bytes" help:"cache budget in memory with amnesia = true"`
	FillMaxBytes         config.Size `koanf:"fill_max_bytes" help:"larger bodies are streamed to the client, not stored"`

	FillWorkers        int           `koanf:"fill_workers" help:"workers of the fill queue (restart to change)"`
	FillQueueCap       int           `koanf:"fill_queue_cap" help:"fill queue capacity; full → 429 busy (restart to change)"`
	FillTimeout        time.Duration `koanf:"fill_timeout" help:"upstream deadline for response headers and per 64 KiB of body"`
	FillMaxTries       int           `koanf:"fill_max_tries" help:"attempts of an upstream GET or HEAD in all (origins may override)"`
	HeuristicMaxTTL    time.Duration `koanf:"heuristic_max_ttl" help:"cap of a heuristic freshness lifetime"`
	StaleIfUnreachable time.Duration `koanf:"stale_if_unreachable" help:"how long past expiry a stale asset is served while its origin is unreachable (0 = never)"`
	MaxVariants        int           `koanf:"max_variants" help:"stored Vary variants per asset key"`

	PacksDir            string        `koanf:"packs_dir" help:"folder of *.pmtiles and *.mbtiles packs; empty = <data dir>/packs (picked up when made)"`
	Packs               []string      `koanf:"packs" help:"further pack files"`
	VerifyPacks         string        `koanf:"verify_packs" help:"checks at mount: basic or full"`
	PackErrors          string        `koanf:"pack_errors" help:"a pack failing its checks: fail (not ready) or skip (logged)"`
	PackPollInterval    time.Duration `koanf:"pack_poll_interval" help:"how often packs_dir and the packs are re-listed and stat'ed"`
	QuickCheckMaxBytes  config.Size   `koanf:"quick_check_max_bytes" help:"MBTiles up to this size get PRAGMA quick_check at mount"`
	DirCacheBytes       config.Size   `koanf:"dir_cache_bytes" help:"PMTiles leaf directory cache size"`
	TileMaxDecodedBytes config.Size   `koanf:"tile_max_decoded_bytes" help:"largest tile decoded for a client that refuses its coding"`
	MaxRanges           int           `koanf:"max_ranges" help:"ranges per request; more → 200 with the full body"`
	TilesCacheControl   string        `koanf:"tiles_cache_control" help:"Cache-Control of packs, tiles and TileJSON"`

	Origins []OriginConfig `koanf:"origins" help:"upstream origins of /assets ([[edge.origins]] tables: name, url, default_ttl, allow_insecure, max_tries, forward_unsafe, forward_authorization, honor_request_cache_control)"`
}

// OriginConfig is one [[edge.origins]] table (docs/edge.md §7.1, §10).
// MaxTries nil takes fill_max_tries; HonorRequestCacheControl nil is true.
type OriginConfig struct {
	Name                     string        `koanf:"name" json:"name"`
	URL                      string        `koanf:"url" json:"url"`
	DefaultTTL               time.Duration `koanf:"default_ttl" json:"default_ttl,omitempty"`
	AllowInsecure            bool          `koanf:"allow_insecure" json:"allow_insecure,omitempty"`
	MaxTries                 *int          `koanf:"max_tries" json:"max_tries,omitempty"`
	ForwardUnsafe            bool          `koanf:"forward_unsafe" json:"forward_unsafe,omitempty"`
	ForwardAuthorization     bool          `koanf:"forward_authorization" json:"forward_authorization,omitempty"`
	HonorRequestCacheControl *bool         `koanf:"honor_request_cache_control" json:"honor_request_cache_control,omitempty"`
}

// DefaultConfig returns the docs/edge.md §10 defaults.
func DefaultConfig() Config {
	return Config{
		Listen:       "127.0.0.1:8081",
		Ingress:      httpx.DefaultIngress(),
		MaxProviders: 3,

		RequestTimeout: 5 * time.Second,
		BodyMaxBytes:   1 << 20,
		TrustedProxy:   []string{},
		CORSOrigins:    []string{"*"},

		CacheMaxBytes: 1 << 30, AmnesiaCacheMaxBytes: 256 << 20, FillMaxBytes: 64 << 20,

		FillWorkers: 32, FillQueueCap: 512, FillTimeout: 5 * time.Second, FillMaxTries: 3,
		HeuristicMaxTTL: 24 * time.Hour, StaleIfUnreachable: 60 * time.Second, MaxVariants: 16,

		Packs: []string{}, VerifyPacks: "basic", PackErrors: "fail", PackPollInterval: 2 * time.Second,
		QuickCheckMaxBytes: 64 << 20, DirCacheBytes: 64 << 20, TileMaxDecodedBytes: 8 << 20, MaxRanges: 128,
		TilesCacheControl: "public, max-age=60",

		Origins: []OriginConfig{},
	}
}

// restartOnly names the keys a reload changed that need a restart (docs/edge.md §10).
func (c Config) restartOnly(n Config) []string {
	return config.Changed(roleName, &c, &n, "listen", "storage_url", "index_url", "fill_workers", "fill_queue_cap")
}
