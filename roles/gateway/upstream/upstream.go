// Package upstream is the gateway's forwarder to one upstream role (storage,
// index, edge or registry; docs/gateway.md §2, §3.8, §10): a Link sends raw
// HTTP requests either over HTTP to a base URL or in-process through the
// co-located role's own http.Handler (httpx/inproc), so both wirings answer
// with the same status, headers, body and error envelopes. A Link adds the
// trusted-link headers, enforces the forward deadline and the per-chunk
// progress limit, retries reads, and guards the upstream with one circuit
// breaker. Do returns the upstream's response; Serve writes it to the
// client, and serves in-process reads by running the role's handler in the
// caller's goroutine.
package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/httpx/inproc"
	"github.com/ronhq/ron/roles/gateway/gatewayapi"
	"github.com/ronhq/ron/runtime"
)

// metricRole is the role label of every metric a Link reports.
const metricRole = gatewayapi.RoleName

// Policy holds the live forwarding settings (hot-reloadable, see SetPolicy).
// Zero or negative fields take the DefaultPolicy values.
type Policy struct {
	// ForwardTimeout is the default deadline of a call and the progress limit
	// of each body read (5 s).
	ForwardTimeout time.Duration
	// MaxAttempts bounds the attempts of a GET or HEAD in all (3).
	MaxAttempts int
	// RetryBase and RetryCap shape the pause before a retry (50 ms, 2 s).
	RetryBase, RetryCap time.Duration
	// IntervalBreakerConfig is the link's breaker, counted per cyclic
	// interval (client.IntervalBreakerConfig.FixedWindowOptions).
	client.IntervalBreakerConfig
}

// DefaultPolicy returns the docs/gateway.md §9 defaults.
func DefaultPolicy() Policy {
	return Policy{
		ForwardTimeout: 5 * time.Second, MaxAttempts: 3,
		RetryBase: 50 * time.Millisecond, RetryCap: 2 * time.Second,
		IntervalBreakerConfig: client.DefaultIntervalBreaker(),
	}
}

func (p Policy) withDefaults() Policy {
	d := DefaultPolicy()
	if p.ForwardTimeout <= 0 {
		p.ForwardTimeout = d.ForwardTimeout
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.RetryBase <= 0 {
		p.RetryBase = d.RetryBase
	}
	if p.RetryCap <= 0 {
		p.RetryCap = d.RetryCap
	}
	p.IntervalBreakerConfig = p.IntervalBreakerConfig.WithDefaults()
	return p
}

// Options configure a Link.
type Options struct {
	// Name is the upstream's metric label: "storage", "index", "edge", "registry".
	Name string
	// BaseURL is the http(s) base URL of an HTTP link (used when Handler is nil).
	BaseURL string
	// Handler is the co-located role's handler for an in-process link;
	// BaseURL is then ignored and "http://<name>.inproc" is used.
	Handler http.Handler
	// Token returns the bearer token of an HTTP link (nil: none); it is
	// called once per Do and ignored in-process.
	Token func(ctx context.Context) (string, error)
	// Principal is the link principal put in the request context of
	// in-process calls (auth.WithClaims).
	Principal *auth.Claims
	// Transport carries HTTP links (nil: a dedicated one, released by Close);
	// it is not used in-process.
	Transport http.RoundTripper
	// Policy is the initial forwarding policy.
	Policy Policy
	// Metrics receives the Link's metrics (role label "gateway"); nil keeps
	// them private.
	Metrics *runtime.Metrics
	// NoStateGauge leaves the breaker out of ron_breaker_state: for one of
	// several links to the same upstream (cluster members), whose owner
	// reports one state for them all.
	NoStateGauge bool
	// Log receives a debug line per attempt that failed to connect or broke
	// the protocol, and an error line when the link token is unavailable
	// (never a path or a token).
	Log zerolog.Logger
}

// Link forwards calls to one upstream. It is safe for concurrent use.
type Link struct {
	name      string
	base      *url.URL
	rt        http.RoundTripper
	own       *http.Transport   // the dedicated transport, closed by Close
	local     *inproc.Transport // the in-process transport (nil over HTTP)
	inProcess bool
	token     func(ctx context.Context) (string, error)
	principal *auth.Claims
	log       zerolog.Logger
	met       *linkMetrics
	rnd       func() float64 // uniform in [0, 1): the retry jitter

	mu  sync.Mutex // serializes SetPolicy
	pol atomic.Pointer[Policy]
	br  atomic.Pointer[breaker]
}

// New returns a Link. It does no I/O. It fails on an empty name and, for an
// HTTP link, on a base URL that is not http(s)://host[:port][/path].
func New(opt Options) (*Link, error) {
	if opt.Name == "" {
		return nil, errors.New("upstream: empty name")
	}
	l := &Link{name: opt.Name, token: opt.Token, principal: opt.Principal, log: opt.Log, rnd: randFloat}
	if err := l.wire(opt); err != nil {
		return nil, err
	}
	p := opt.Policy.withDefaults()
	l.pol.Store(&p)
	l.br.Store(newBreaker(opt.Name, p.IntervalBreakerConfig))
	state := l.BreakerState
	if opt.NoStateGauge {
		state = nil
	}
	l.met = newLinkMetrics(opt.Metrics, opt.Name, state)
	return l, nil
}

// wire picks the transport and base URL.
func (l *Link) wire(opt Options) error {
	if opt.Handler != nil {
		l.local = inproc.New(opt.Handler)
		l.inProcess, l.rt = true, l.local
		l.base = &url.URL{Scheme: "http", Host: opt.Name + ".inproc"}
		return nil
	}
	u, err := url.Parse(opt.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("upstream %s: base URL %q: want http(s)://host[:port][/path]", opt.Name, opt.BaseURL)
	}
	l.base, l.rt = u, opt.Transport
	if l.rt == nil {
		l.own = newTransport()
		l.rt = l.own
	}
	return nil
}

// newTransport is the dedicated transport of an HTTP link: no transparent
// compression (bytes pass through unchanged), a large idle pool (the
// scheduler forwards up to 512 requests at once).
func newTransport() *http.Transport {
	return client.NewTransport(client.TransportOptions{DisableCompression: true, MaxIdleConns: 1024, MaxIdleConnsPerHost: 512})
}

// Name returns the upstream's name (its metric label).
func (l *Link) Name() string { return l.name }

// InProcess reports whether calls are served in-process.
func (l *Link) InProcess() bool { return l.inProcess }

// Close releases the idle connections of the dedicated transport. The Link
// stays usable.
func (l *Link) Close() {
	if l.own != nil {
		l.own.CloseIdleConnections()
	}
}

// SetPolicy replaces the policy; calls started afterwards use it. The
// breaker is replaced by a fresh (closed) one only when a breaker setting
// changed, so an unrelated reload keeps an open breaker open.
func (l *Link) SetPolicy(p Policy) {
	p = p.withDefaults()
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.pol.Load()
	l.pol.Store(&p)
	if p.IntervalBreakerConfig != old.IntervalBreakerConfig {
		l.br.Store(newBreaker(l.name, p.IntervalBreakerConfig))
	}
}

// Policy returns the policy in force.
func (l *Link) Policy() Policy { return *l.pol.Load() }

// BreakerState returns the breaker's state: "closed", "half_open" or "open".
// Reading it moves an expired open breaker to half_open.
func (l *Link) BreakerState() string { return l.br.Load().state() }
