package gateway

import (
	"fmt"
	"net/netip"
	"net/url"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/httpx/netcfg"
	"github.com/ronhq/ron/roles/edge/edgeapi"
	"github.com/ronhq/ron/roles/gateway/gatewayapi"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime/config"
)

// roleName is the gateway's name in the role table, logs and metric labels.
const roleName = gatewayapi.RoleName

// Config is the [gateway] section (docs/gateway.md §9). Every key but listen
// and the four upstream URLs can change live (Role.Apply).
type Config struct {
	Listen        string `koanf:"listen" help:"gateway listener address (restart to change)"`
	AdvertiseURL  string `koanf:"advertise_url" help:"URL other nodes and clients use; http://<listen> when empty"`
	httpx.Ingress `koanf:",squash"`

	StorageURL    string   `koanf:"storage_url" help:"storage base URL when storage is not co-located (restart to change)"`
	IndexURL      string   `koanf:"index_url" help:"index base URL when the index is not co-located (restart to change)"`
	EdgeURL       string   `koanf:"edge_url" help:"edge base URL when the edge is not co-located (restart to change)"`
	RegistryURL   string   `koanf:"registry_url" help:"registry base URL when the registry is not co-located (restart to change)"`
	UpstreamToken string   `koanf:"upstream_token" secret:"true" help:"bearer token sent to HTTP upstreams instead of a minted one"`
	TrustedProxy  []string `koanf:"trusted_proxies" help:"CIDRs whose X-Forwarded-For is believed"`
	PublicReads   bool     `koanf:"public_reads" help:"false → reads need a token with the route's read scope"`

	JSONBodyMaxBytes   int64   `koanf:"json_body_max_bytes" help:"body cap of PUT /names"`
	ObjectBodyMaxBytes int64   `koanf:"object_body_max_bytes" help:"body cap of POST /o and PUT /o/{b3}"`
	DecodeMaxBytes     int64   `koanf:"decode_max_bytes" help:"largest decoded JSON body"`
	DecodeMaxRatio     float64 `koanf:"decode_max_ratio" help:"largest decoded/encoded ratio of a JSON body past 64 KiB"`

	AnonRPS     float64 `koanf:"anon_rps" help:"requests per second per anonymous /24 or /64 prefix"`
	AnonBurst   int     `koanf:"anon_burst" help:"token bucket size per anonymous prefix (0 = ceil(anon_rps))"`
	AnonWeight  int     `koanf:"anon_weight" help:"DRR weight of an anonymous prefix"`
	TenantRPS   float64 `koanf:"tenant_rps" help:"requests per second of a token tenant not listed in tenants"`
	TenantBurst int     `koanf:"tenant_burst" help:"token bucket size of an unlisted token tenant (0 = ceil(tenant_rps))"`
	TenantWt    int     `koanf:"tenant_weight" help:"DRR weight of an unlisted token tenant"`

	MaxTenantStates int           `koanf:"max_tenant_states" help:"per-tenant state entries kept"`
	SchedInflight   int           `koanf:"sched_inflight" help:"requests forwarded at once"`
	TenantQueueCap  int           `koanf:"tenant_queue_cap" help:"waiting requests per tenant; full → 429"`
	QueueCap        int           `koanf:"queue_cap" help:"waiting requests in total; full → the oldest is dropped with 503"`
	DRRQuantum      int           `koanf:"drr_quantum" help:"cost units per DRR round per unit of weight"`
	MaxQueueWait    time.Duration `koanf:"max_queue_wait" help:"longest wait for a scheduler slot"`

	ForwardTimeout   time.Duration `koanf:"forward_timeout" help:"forward deadline and per-64KiB-chunk progress limit"`
	RetryMaxAttempts int           `koanf:"retry_max_attempts" help:"attempts of an idempotent read in all"`
	RetryBase        time.Duration `koanf:"retry_base" help:"first retry pause (jittered up to twice this)"`
	RetryCap         time.Duration `koanf:"retry_cap" help:"longest retry pause"`

	client.IntervalBreakerConfig `koanf:",squash"` // the upstream links' and the providers' breakers

	MaxProviders   int           `koanf:"max_providers" help:"index providers tried per object read"`
	MaxStreams     int           `koanf:"max_streams" help:"concurrent /registry/stream connections"`
	ShedWritesAt   float64       `koanf:"shed_writes_at" help:"share of queue_cap waiting that turns write shedding on"`
	ShedClearAfter time.Duration `koanf:"shed_clear_after" help:"time below half the threshold before write shedding ends"`

	NameCacheTTL       time.Duration `koanf:"name_cache_ttl" help:"lifetime of cached /n name resolutions"`
	NamesCacheControl  string        `koanf:"names_cache_control" help:"Cache-Control of /n answers"`
	ManifestMaxBytes   int64         `koanf:"manifest_max_bytes" help:"largest site manifest read"`
	ManifestCacheBytes int64         `koanf:"manifest_cache_bytes" help:"site manifest cache size"`
	CORSOrigins        []string      `koanf:"cors_origins" help:"origins allowed to read cross-origin (\"*\" = any; writes only for listed origins)"`

	Tenants []TenantConfig `koanf:"tenants" help:"per-tenant limits ([[gateway.tenants]] tables: id, rps, burst, weight, max_bytes_per_s)"`
}

// TenantConfig is one [[gateway.tenants]] table: the fields and meanings of
// the registry's tenant item (docs/gateway.md §7). Missing fields take the
// tenant_* defaults (rps, burst, weight) or 0 (max_bytes_per_s, unlimited).
type TenantConfig struct {
	ID           string   `koanf:"id" json:"id"`
	RPS          *float64 `koanf:"rps" json:"rps,omitempty"`
	Burst        *int     `koanf:"burst" json:"burst,omitempty"`
	Weight       *int     `koanf:"weight" json:"weight,omitempty"`
	MaxBytesPerS int64    `koanf:"max_bytes_per_s" json:"max_bytes_per_s,omitempty"`
}

// DefaultConfig returns the docs/gateway.md §9 defaults.
func DefaultConfig() Config {
	return Config{
		Listen:  "127.0.0.1:8090",
		Ingress: httpx.Ingress{MaxInflight: 1280, MaxConnsPerIP: 256},

		TrustedProxy: []string{},
		PublicReads:  true,

		JSONBodyMaxBytes: 1 << 20, ObjectBodyMaxBytes: 1 << 30,
		DecodeMaxBytes: 8 << 20, DecodeMaxRatio: 10,

		AnonRPS: 100, AnonBurst: 200, AnonWeight: 1,
		TenantRPS: 500, TenantBurst: 1000, TenantWt: 1,

		MaxTenantStates: 65536, SchedInflight: 512, TenantQueueCap: 64, QueueCap: 512,
		DRRQuantum: 8, MaxQueueWait: 2 * time.Second,

		ForwardTimeout: 5 * time.Second, RetryMaxAttempts: 3,
		RetryBase: 50 * time.Millisecond, RetryCap: 2 * time.Second,

		IntervalBreakerConfig: client.DefaultIntervalBreaker(),

		MaxProviders: 3, MaxStreams: 256, ShedWritesAt: 0.5, ShedClearAfter: 5 * time.Second,

		NameCacheTTL: 5 * time.Second, NamesCacheControl: "public, max-age=0, must-revalidate",
		ManifestMaxBytes: 8 << 20, ManifestCacheBytes: 32 << 20,
		CORSOrigins: []string{"*"},
		Tenants:     []TenantConfig{},
	}
}

// keyError is a validation error naming "gateway.<key>".
func keyError(key, format string, args ...any) error {
	return fmt.Errorf("gateway.%s: %s", key, fmt.Sprintf(format, args...))
}

// Validate checks every key on its own. The upstream rules that depend on
// which roles run in the process are checked by CheckUpstreams.
func (c Config) Validate() error {
	for _, check := range []func() error{c.checkURLs, c.checkBodies, c.checkTenantDefaults,
		c.checkScheduler, c.checkForwarding, c.checkBreaker, c.checkSites, c.checkProxies} {
		if err := check(); err != nil {
			return err
		}
	}
	_, err := c.tenantItems()
	return err
}

// CheckUpstreams applies docs/gateway.md §2: the gateway needs a storage
// upstream or an index, and a URL key must not be set for a role that runs
// in the same process. colocated reports whether a role is enabled here.
func (c Config) CheckUpstreams(colocated func(role string) bool) error {
	if err := c.CheckClusterUpstreams(colocated); err != nil {
		return err
	}
	if !colocated(storageapi.RoleName) && c.StorageURL == "" && !colocated(indexapi.RoleName) && c.IndexURL == "" {
		return keyError("storage_url", "the gateway needs a storage upstream or an index: enable storage or index, or set storage_url or index_url")
	}
	return nil
}

// CheckClusterUpstreams is CheckUpstreams in cluster mode (docs/cluster.md §7,
// docs/gateway.md §2): a URL key must not be set for a co-located role, but
// the gateway needs neither storage nor an index of its own, since alive
// members running them serve every upstream that is neither co-located
// nor configured.
func (c Config) CheckClusterUpstreams(colocated func(role string) bool) error {
	for _, u := range c.upstreamURLs() {
		if u.url != "" && colocated(u.role) {
			return keyError(u.role+"_url", "must be empty while the %s role runs in this process (one source of truth)", u.role)
		}
	}
	return nil
}

type upstreamURL struct{ role, url string }

func (c Config) upstreamURLs() []upstreamURL {
	return []upstreamURL{{storageapi.RoleName, c.StorageURL}, {indexapi.RoleName, c.IndexURL}, {edgeapi.RoleName, c.EdgeURL}, {registryapi.RoleName, c.RegistryURL}}
}

func (c Config) checkURLs() error {
	for _, u := range append(c.upstreamURLs(), upstreamURL{"advertise", c.AdvertiseURL}) {
		if u.url == "" {
			continue
		}
		if err := netcfg.CheckBaseURL(u.url); err != nil {
			return keyError(u.role+"_url", "%v", err)
		}
	}
	return nil
}

func (c Config) checkBodies() error {
	switch {
	case c.JSONBodyMaxBytes < 1:
		return keyError("json_body_max_bytes", "must be positive, got %d", c.JSONBodyMaxBytes)
	case c.ObjectBodyMaxBytes < 1:
		return keyError("object_body_max_bytes", "must be positive, got %d", c.ObjectBodyMaxBytes)
	case c.DecodeMaxBytes < 1:
		return keyError("decode_max_bytes", "must be positive, got %d", c.DecodeMaxBytes)
	case !(c.DecodeMaxRatio >= 1):
		return keyError("decode_max_ratio", "must be at least 1, got %v", c.DecodeMaxRatio)
	}
	return nil
}

func (c Config) checkTenantDefaults() error {
	switch {
	case !(c.AnonRPS >= 0) || !(c.TenantRPS >= 0):
		return keyError("anon_rps", "anon_rps and tenant_rps must be ≥ 0, got %v and %v", c.AnonRPS, c.TenantRPS)
	case c.AnonBurst < 0 || c.TenantBurst < 0:
		return keyError("anon_burst", "anon_burst and tenant_burst must be ≥ 0, got %d and %d", c.AnonBurst, c.TenantBurst)
	case c.AnonWeight < 1 || c.AnonWeight > 1000:
		return keyError("anon_weight", "must be within 1–1000, got %d", c.AnonWeight)
	case c.TenantWt < 1 || c.TenantWt > 1000:
		return keyError("tenant_weight", "must be within 1–1000, got %d", c.TenantWt)
	case c.MaxTenantStates < 1:
		return keyError("max_tenant_states", "must be positive, got %d", c.MaxTenantStates)
	}
	return nil
}

func (c Config) checkScheduler() error {
	for _, k := range []struct {
		key string
		v   int
	}{{"sched_inflight", c.SchedInflight}, {"tenant_queue_cap", c.TenantQueueCap}, {"queue_cap", c.QueueCap},
		{"drr_quantum", c.DRRQuantum}, {"max_providers", c.MaxProviders}, {"max_streams", c.MaxStreams}} {
		if k.v < 1 {
			return keyError(k.key, "must be positive, got %d", k.v)
		}
	}
	switch {
	case c.MaxQueueWait <= 0:
		return keyError("max_queue_wait", "must be positive, got %s", c.MaxQueueWait)
	case !(c.ShedWritesAt > 0 && c.ShedWritesAt <= 1):
		return keyError("shed_writes_at", "must be within (0, 1], got %v", c.ShedWritesAt)
	case c.ShedClearAfter <= 0:
		return keyError("shed_clear_after", "must be positive, got %s", c.ShedClearAfter)
	}
	return nil
}

func (c Config) checkForwarding() error {
	switch {
	case c.ForwardTimeout <= 0:
		return keyError("forward_timeout", "must be positive, got %s", c.ForwardTimeout)
	case c.RetryMaxAttempts < 1:
		return keyError("retry_max_attempts", "must be at least 1, got %d", c.RetryMaxAttempts)
	case c.RetryBase <= 0 || c.RetryCap < c.RetryBase:
		return keyError("retry_base", "want 0 < retry_base ≤ retry_cap, got %s and %s", c.RetryBase, c.RetryCap)
	}
	return nil
}

func (c Config) checkBreaker() error { return c.IntervalBreakerConfig.Validate(roleName) }

func (c Config) checkSites() error {
	switch {
	case c.NameCacheTTL < 0:
		return keyError("name_cache_ttl", "must not be negative, got %s", c.NameCacheTTL)
	case c.ManifestMaxBytes < 1:
		return keyError("manifest_max_bytes", "must be positive, got %d", c.ManifestMaxBytes)
	case c.ManifestCacheBytes < c.ManifestMaxBytes:
		return keyError("manifest_cache_bytes", "must hold at least one manifest of manifest_max_bytes (%d), got %d", c.ManifestMaxBytes, c.ManifestCacheBytes)
	}
	for _, o := range c.CORSOrigins {
		if o == "*" {
			continue
		}
		if u, err := url.Parse(o); err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" {
			return keyError("cors_origins", "%q is neither \"*\" nor an origin like https://app.example", o)
		}
	}
	return nil
}

func (c Config) checkProxies() error {
	_, err := c.trustedPrefixes()
	return err
}

// trustedPrefixes parses trusted_proxies (a bare address is its /32 or /128).
func (c Config) trustedPrefixes() ([]netip.Prefix, error) {
	out, err := netcfg.Prefixes(c.TrustedProxy)
	if err != nil {
		return nil, keyError("trusted_proxies", "%v", err)
	}
	return out, nil
}

// restartOnly names the keys a reload changed that need a restart.
func (c Config) restartOnly(n Config) []string {
	return config.Changed(roleName, &c, &n, "listen", "storage_url", "index_url", "edge_url", "registry_url")
}
