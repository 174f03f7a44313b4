// Package client is the HTTP client every role uses to call another role
// (docs/architecture.md §1, §9): per-attempt timeouts, jittered retries of idempotent
// calls, a circuit breaker per target, the error envelope decoded into
// *httpx.Error, and the standard metrics.
//
// One Client talks to one target (its BaseURL) and owns that target's breaker;
// create one Client per (role, target) and share it.
package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// Defaults applied by New to zero Options fields.
const (
	DefaultTimeout     = 5 * time.Second
	DefaultRetries     = 3
	DefaultBackoffBase = 50 * time.Millisecond
	DefaultBackoffCap  = 2 * time.Second
)

// Options configure a Client. Zero fields take the defaults above.
type Options struct {
	// BaseURL is the target, e.g. "http://10.0.0.2:5303". Request paths are
	// appended to its path. An unparsable URL makes every call fail.
	BaseURL string
	// Token, when set, is called once per Do; a non-empty result is sent as
	// "Authorization: Bearer <token>". Its error fails the call.
	Token func(ctx context.Context) (string, error)
	// Timeout bounds each attempt until the response headers arrive (the body
	// of a returned response is bounded by the caller's ctx only).
	Timeout time.Duration
	// Retries is the number of retries after the first attempt (0 → 3,
	// negative → none). Only idempotent calls are retried.
	Retries int
	// BackoffBase: the first wait is random in [base, 2·base), doubling on
	// each retry, capped at BackoffCap (defaults 50 ms and 2 s).
	BackoffBase time.Duration
	BackoffCap  time.Duration
	// Breaker configures the target's circuit breaker.
	Breaker BreakerOptions
	// Metrics receives ron_backoff_retries_total, ron_io_timeouts_total and
	// ron_breaker_state; nil keeps them private to the Client.
	Metrics *metrics.Set
	// Role is the calling role, the "role" label of the metrics (default "node").
	Role string
	// HTTP is the underlying client; its Timeout must be zero. When nil the
	// Client uses its own transport, released by Close.
	HTTP *http.Client
}

// Client calls one target. It is safe for concurrent use.
type Client struct {
	opt       Options
	base      *url.URL
	baseErr   error
	target    string
	http      *http.Client
	own       bool
	set       *metrics.Set
	breaker   *Breaker
	stateGaug [3]*metrics.Gauge
}

// New returns a Client for opt.BaseURL. It does no I/O.
func New(opt Options) *Client {
	opt = withDefaults(opt)
	c := &Client{opt: opt, http: opt.HTTP, set: opt.Metrics}
	c.base, c.baseErr = parseBase(opt.BaseURL)
	if c.base != nil {
		c.target = c.base.Host
	}
	if c.http == nil {
		c.http, c.own = newHTTPClient(), true
	}
	if c.set == nil {
		c.set = metrics.NewSet()
	}
	c.initBreaker()
	return c
}

func withDefaults(opt Options) Options {
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.Retries == 0 {
		opt.Retries = DefaultRetries
	} else if opt.Retries < 0 {
		opt.Retries = 0
	}
	if opt.BackoffBase <= 0 {
		opt.BackoffBase = DefaultBackoffBase
	}
	if opt.BackoffCap <= 0 {
		opt.BackoffCap = DefaultBackoffCap
	}
	if opt.Role == "" {
		opt.Role = "node"
	}
	opt.Breaker = opt.Breaker.withDefaults()
	return opt
}

func parseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("client: base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q: want http(s)://host[:port]", raw)
	}
	return u, nil
}

func newHTTPClient() *http.Client {
	return &http.Client{Transport: NewTransport(TransportOptions{MaxIdleConnsPerHost: 64})}
}

// Target returns the host[:port] this Client calls (the metrics' target label).
func (c *Client) Target() string { return c.target }

// Close releases idle connections of the Client's own transport. The Client
// stays usable.
func (c *Client) Close() {
	if c.own {
		c.http.CloseIdleConnections()
	}
}

// labelValue escapes a Prometheus label value.
var labelValue = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace

func (c *Client) counter(name, op string) *metrics.Counter {
	return c.set.GetOrCreateCounter(fmt.Sprintf(`%s{role="%s",op="%s"}`,
		name, labelValue(c.opt.Role), labelValue(op)))
}
