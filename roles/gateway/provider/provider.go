// Package provider serves object reads from the providers an index lists
// (docs/gateway.md §4 step 4): the verified transfer of docs/storage.md §4
// (package store/verified) across at most max_providers untrusted base URLs:
// every 64 KiB group is verified against the object id before any byte of
// it is written, and the object's size before an answer states it without
// reading the last group (the sizes proven are remembered per Fetcher),
// with a circuit breaker per provider, bad marks after a failed
// verification, and a progress timeout per group.
//
// Requests to providers carry no tenant, token, cookie or forwarded headers:
// only Range when needed, Accept-Encoding: identity and a User-Agent. They
// never follow redirects. The Fetcher starts no goroutines; every call runs
// on its caller's goroutine and its waits are bounded by the caller's context
// and the Fetcher's Timeout.
package provider

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/gateway/gatewayapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store/verified"
)

// Defaults of zero Options fields.
const (
	DefaultMaxProviders = 3
	DefaultBadFor       = 10 * time.Minute
	DefaultTimeout      = 5 * time.Second
)

// maxTracked bounds the breakers and the bad marks: one entry per provider
// base URL, least recently used evicted first.
const maxTracked = 1024

// roleName is the role label of the metrics.
const roleName = gatewayapi.RoleName

// Options configure a Fetcher. Zero fields take the defaults.
type Options struct {
	// HTTP is the client for provider requests; its Timeout must be zero
	// (the Fetcher bounds each phase itself). The Fetcher uses a copy with
	// redirects disabled and no cookie jar. Nil: a client of its own.
	HTTP *http.Client
	// MaxProviders is how many providers one read tries (max_providers, 3).
	MaxProviders int
	// BadFor is how long a provider that failed verification is skipped
	// (10 min).
	BadFor time.Duration
	// Breaker configures the per-provider circuit breakers (the gateway's
	// breaker_* keys; zero fields take their defaults).
	Breaker client.IntervalBreakerConfig
	// Timeout (forward_timeout, 5 s) bounds each provider request until its
	// response headers, then every 64 KiB group read from it and every
	// group written to the client.
	Timeout time.Duration
	// Metrics receives ron_gateway_hash_mismatch_total,
	// ron_gateway_upstream_requests_total{upstream="provider",code},
	// ron_io_timeouts_total{op="provider"} and
	// ron_breaker_state{target="provider",state} (the worst provider
	// breaker), all with role="gateway". Nil: private metrics.
	Metrics *runtime.Metrics
	// Log receives a warning per failed verification.
	Log zerolog.Logger
}

// Fetcher reads objects from providers. It is safe for concurrent use.
type Fetcher struct {
	http         *http.Client
	maxProviders atomic.Int64
	timeout      atomic.Int64 // nanoseconds
	health       *health
	sizes        *verified.Sizes // object sizes proven by reads (see Serve)
	met          fetchMetrics
	log          zerolog.Logger
}

// New returns a Fetcher. It does no I/O.
func New(opt Options) *Fetcher {
	opt = withDefaults(opt)
	c := *opt.HTTP
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.Jar = nil
	f := &Fetcher{http: &c, log: opt.Log, sizes: verified.NewSizes(0)}
	f.health = newHealth(opt.BadFor, opt.Breaker)
	f.met = newFetchMetrics(opt.Metrics, f.health)
	f.SetMaxProviders(opt.MaxProviders)
	f.SetTimeout(opt.Timeout)
	return f
}

func withDefaults(opt Options) Options {
	if opt.HTTP == nil {
		opt.HTTP = &http.Client{}
	}
	if opt.MaxProviders <= 0 {
		opt.MaxProviders = DefaultMaxProviders
	}
	if opt.BadFor <= 0 {
		opt.BadFor = DefaultBadFor
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	opt.Breaker = opt.Breaker.WithDefaults()
	return opt
}

// SetMaxProviders changes max_providers live (values below 1 count as 1).
func (f *Fetcher) SetMaxProviders(n int) { f.maxProviders.Store(int64(max(n, 1))) }

// SetTimeout changes forward_timeout live for calls that start afterwards
// (values ≤ 0 restore the default).
func (f *Fetcher) SetTimeout(d time.Duration) {
	if d <= 0 {
		d = DefaultTimeout
	}
	f.timeout.Store(int64(d))
}

// SetBreaker changes the breaker settings live. Existing breakers are
// dropped (their state with them); every provider gets a fresh breaker with
// the new settings on its next use.
func (f *Fetcher) SetBreaker(s client.IntervalBreakerConfig) { f.health.setBreaker(s.WithDefaults()) }

func (f *Fetcher) maxTries() int { return int(f.maxProviders.Load()) }

func (f *Fetcher) timeoutNow() time.Duration { return time.Duration(f.timeout.Load()) }
