package index

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/admit"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexdb"
	"github.com/ronhq/ron/runtime/config"
)

// Config is the [index] section (docs/index.md §12). Every key but listen
// can change live (Role.Apply).
type Config struct {
	Listen        string `koanf:"listen" help:"index listener address (restart to change)"`
	AdvertiseURL  string `koanf:"advertise_url" help:"URL other nodes and clients use; http://<listen> when empty"`
	httpx.Ingress `koanf:",squash"`

	Peers         []string    `koanf:"peers" help:"peer index base URLs (static mode); this node's own advertise_url is skipped"`
	Alpha         int         `koanf:"alpha" help:"peer lookup legs started at once"`
	Beta          int         `koanf:"beta" help:"more legs started at hedge_ms without an answer"`
	HedgeMS       int         `koanf:"hedge_ms" help:"hedge delay in milliseconds"`
	DeadlineMS    int         `koanf:"deadline_ms" help:"whole resolve budget in milliseconds"`
	RetryMax      int         `koanf:"retry_max" help:"retries per peer leg on transient errors"`
	RetryJitterMS MillisRange `koanf:"retry_jitter_ms" help:"[min, max] pause before a leg retry, in milliseconds"`

	client.WindowBreakerConfig `koanf:",squash"` // the per-peer lookup breakers

	CacheEntries int           `koanf:"cache_entries" help:"answer cache capacity in entries"`
	CacheTTL     time.Duration `koanf:"cache_ttl" help:"lifetime of cached positive answers"`
	NegCacheTTL  time.Duration `koanf:"neg_cache_ttl" help:"lifetime of cached negative and empty answers"`

	admit.QueueConfig `koanf:",squash"`
	Workers           int     `koanf:"workers" help:"requests served at once"`
	RatelimitRPS      float64 `koanf:"ratelimit_rps" help:"per-IP requests per second; 0 = off, over → 429 rate_limited"`
	RatelimitBurst    int     `koanf:"ratelimit_burst" help:"per-IP token bucket size"`

	NameHistory        int           `koanf:"name_history" help:"versions kept per name"`
	ProviderTTLDefault time.Duration `koanf:"provider_ttl_default" help:"TTL of provider records announced without ttl_s"`
	ProviderTTLMax     time.Duration `koanf:"provider_ttl_max" help:"largest provider record TTL accepted"`
	ProvidersPerObject int           `koanf:"providers_per_object" help:"provider records kept per object"`
	JanitorInterval    time.Duration `koanf:"janitor_interval" help:"how often expired provider records are pruned"`
	JanitorBatch       int           `koanf:"janitor_batch" help:"expired records pruned per transaction"`
	PublicReads        bool          `koanf:"public_reads" help:"false → reads need an index:read token"`
	CompatRoutes       bool          `koanf:"compat_routes" help:"serve the /v1/index compatibility routes"`
}

// DefaultConfig returns the docs/index.md §12 defaults.
func DefaultConfig() Config {
	return Config{
		Listen:        "127.0.0.1:5304",
		Ingress:       httpx.DefaultIngress(),
		Peers:         []string{},
		Alpha:         3,
		Beta:          2,
		HedgeMS:       150,
		DeadlineMS:    1200,
		RetryMax:      3,
		RetryJitterMS: MillisRange{50, 100},
		WindowBreakerConfig: client.WindowBreakerConfig{BreakerWindow: 30 * time.Second, BreakerBucket: 3 * time.Second,
			BreakerMinRequests: 20, BreakerTripRatio: 0.5, BreakerCooldown: 10 * time.Second, BreakerHalfOpen: 3},
		CacheEntries:       100000,
		CacheTTL:           10 * time.Second,
		NegCacheTTL:        2 * time.Second,
		QueueConfig:        admit.QueueConfig{QueueCapacity: 512, QueueTimeout: time.Second},
		Workers:            256,
		RatelimitRPS:       0,
		RatelimitBurst:     200,
		NameHistory:        10,
		ProviderTTLDefault: 600 * time.Second,
		ProviderTTLMax:     86400 * time.Second,
		ProvidersPerObject: 64,
		JanitorInterval:    10 * time.Second,
		JanitorBatch:       1000,
		PublicReads:        true,
	}
}

// Validate checks the docs/index.md §12 rules (alpha ≥ 1, beta ≥ 0, hedge_ms <
// deadline_ms, trip ratio in (0,1]) and that counts, sizes and durations
// make sense. Errors name the key as "index.<key>".
func (c Config) Validate() error {
	for _, check := range []func() error{c.checkLookup, c.checkBreaker, c.checkLimits, c.checkRecords, c.checkPeers} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// keyError is a validation error naming "index.<key>".
func keyError(key, format string, args ...any) error {
	return fmt.Errorf("index.%s: %s", key, fmt.Sprintf(format, args...))
}

// checkLookup checks the hedged lookup keys.
func (c Config) checkLookup() error {
	switch {
	case c.Alpha < 1:
		return keyError("alpha", "must be at least 1, got %d", c.Alpha)
	case c.Beta < 0:
		return keyError("beta", "must be at least 0, got %d", c.Beta)
	case c.HedgeMS < 0:
		return keyError("hedge_ms", "must not be negative, got %d", c.HedgeMS)
	case c.DeadlineMS < 1:
		return keyError("deadline_ms", "must be positive, got %d", c.DeadlineMS)
	case c.HedgeMS >= c.DeadlineMS:
		return keyError("hedge_ms", "must be below deadline_ms (%d), got %d", c.DeadlineMS, c.HedgeMS)
	case c.RetryMax < 0:
		return keyError("retry_max", "must be at least 0, got %d", c.RetryMax)
	}
	return c.checkJitter()
}

// checkJitter checks retry_jitter_ms: 0 < min ≤ max < deadline_ms.
func (c Config) checkJitter() error {
	j := c.RetryJitterMS
	switch {
	case j[0] < 1 || j[1] < j[0]:
		return keyError("retry_jitter_ms", "want 1 ≤ min ≤ max, got %v", j)
	case j[1] >= c.DeadlineMS:
		return keyError("retry_jitter_ms", "max must be below deadline_ms (%d), got %v", c.DeadlineMS, j)
	}
	return nil
}

// checkBreaker checks the per-peer breaker keys.
func (c Config) checkBreaker() error { return c.WindowBreakerConfig.Validate(indexapi.RoleName) }

// checkLimits checks the cache, work queue and rate-limit keys.
func (c Config) checkLimits() error {
	if err := c.QueueConfig.Validate(indexapi.RoleName); err != nil {
		return err
	}
	switch {
	case c.CacheEntries < 1:
		return keyError("cache_entries", "must be at least 1, got %d", c.CacheEntries)
	case c.CacheTTL <= 0:
		return keyError("cache_ttl", "must be positive")
	case c.NegCacheTTL <= 0:
		return keyError("neg_cache_ttl", "must be positive")
	case c.Workers < 1:
		return keyError("workers", "must be at least 1, got %d", c.Workers)
	case c.RatelimitRPS < 0 || math.IsNaN(c.RatelimitRPS) || math.IsInf(c.RatelimitRPS, 0):
		return keyError("ratelimit_rps", "must be 0 (off) or positive, got %v", c.RatelimitRPS)
	case c.RatelimitBurst < 1:
		return keyError("ratelimit_burst", "must be at least 1, got %d", c.RatelimitBurst)
	}
	return nil
}

// checkRecords checks the name and provider record keys.
func (c Config) checkRecords() error {
	switch {
	case c.NameHistory < 1:
		return keyError("name_history", "must be at least 1, got %d", c.NameHistory)
	case c.ProviderTTLMax < time.Second || c.ProviderTTLMax%time.Second != 0:
		return keyError("provider_ttl_max", "must be whole seconds, at least 1s, got %v", c.ProviderTTLMax)
	case c.ProviderTTLDefault < time.Second || c.ProviderTTLDefault%time.Second != 0:
		return keyError("provider_ttl_default", "must be whole seconds, at least 1s, got %v", c.ProviderTTLDefault)
	case c.ProviderTTLDefault > c.ProviderTTLMax:
		return keyError("provider_ttl_default", "must not exceed provider_ttl_max (%v), got %v", c.ProviderTTLMax, c.ProviderTTLDefault)
	case c.ProvidersPerObject < 1:
		return keyError("providers_per_object", "must be at least 1, got %d", c.ProvidersPerObject)
	case c.JanitorInterval <= 0:
		return keyError("janitor_interval", "must be positive")
	case c.JanitorBatch < 1:
		return keyError("janitor_batch", "must be at least 1, got %d", c.JanitorBatch)
	}
	return nil
}

// checkPeers checks advertise_url and every peer URL (http(s), a host, no
// user info, query or fragment, no duplicates after normalising).
func (c Config) checkPeers() error {
	if c.AdvertiseURL != "" {
		if _, err := normalizeURL(c.AdvertiseURL); err != nil {
			return keyError("advertise_url", "%v", err)
		}
	}
	seen := make(map[string]bool, len(c.Peers))
	for _, p := range c.Peers {
		u, err := normalizeURL(p)
		if err != nil {
			return keyError("peers", "%v", err)
		}
		if seen[u] {
			return keyError("peers", "%q listed twice", p)
		}
		seen[u] = true
	}
	return nil
}

// MillisRange is a [min, max] range of milliseconds (retry_jitter_ms). TOML
// writes it as an array, [50, 100]; environment variables and flags as text,
// "50,100".
type MillisRange [2]int

// MarshalText renders "min,max".
func (m MillisRange) MarshalText() ([]byte, error) { return fmt.Appendf(nil, "%d,%d", m[0], m[1]), nil }

// UnmarshalText parses "min,max" (spaces and surrounding brackets allowed).
func (m *MillisRange) UnmarshalText(b []byte) error {
	s := strings.Trim(strings.TrimSpace(string(b)), "[]")
	lo, hi, ok := strings.Cut(s, ",")
	a, errA := strconv.Atoi(strings.TrimSpace(lo))
	z, errZ := strconv.Atoi(strings.TrimSpace(hi))
	if !ok || errA != nil || errZ != nil {
		return fmt.Errorf("want \"min,max\" in milliseconds, got %q", b)
	}
	*m = MillisRange{a, z}
	return nil
}

// restartOnly lists the keys a reload rejects by name: only listen.
func (c Config) restartOnly(n Config) []string {
	return config.Changed(indexapi.RoleName, &c, &n, "listen")
}

// deadline, hedgeAfter and the retry pauses as durations.
func (c Config) deadline() time.Duration   { return time.Duration(c.DeadlineMS) * time.Millisecond }
func (c Config) hedgeAfter() time.Duration { return time.Duration(c.HedgeMS) * time.Millisecond }
func (c Config) jitter() (lo, hi time.Duration) {
	return time.Duration(c.RetryJitterMS[0]) * time.Millisecond, time.Duration(c.RetryJitterMS[1]) * time.Millisecond
}

// limits are the indexdb tunables of c.
func (c Config) limits() indexdb.Limits {
	return indexdb.Limits{MaxTTL: c.ProviderTTLMax, HistoryLen: c.NameHistory, ProvidersPerObject: c.ProvidersPerObject}
}
