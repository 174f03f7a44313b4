package gateway

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/gateway/admission"
	"github.com/ronhq/ron/roles/gateway/drr"
	"github.com/ronhq/ron/roles/gateway/hygiene"
	"github.com/ronhq/ron/roles/gateway/provider"
	"github.com/ronhq/ron/roles/gateway/sites"
	"github.com/ronhq/ron/roles/gateway/tenant"
	"github.com/ronhq/ron/roles/gateway/tenants"
	"github.com/ronhq/ron/roles/gateway/upstream"
	"github.com/ronhq/ron/roles/index/indexapi"
)

// policy is the config in force with its parsed forms, swapped whole on
// reload.
type policy struct {
	cfg     Config
	trusted []netip.Prefix
	cors    hygiene.CORS
}

// newPolicy parses cfg (already validated).
func newPolicy(cfg Config) (*policy, error) {
	trusted, err := cfg.trustedPrefixes()
	if err != nil {
		return nil, err
	}
	return &policy{cfg: cfg, trusted: trusted, cors: hygiene.CORS{Origins: cfg.CORSOrigins}}, nil
}

// isTrusted reports whether ip is inside trusted_proxies (exempt from the
// per-IP connection cap).
func (p *policy) isTrusted(ip string) bool {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	for _, pre := range p.trusted {
		if pre.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

// forwardPolicy is the upstream links' live settings.
func (c Config) forwardPolicy() upstream.Policy {
	return upstream.Policy{ForwardTimeout: c.ForwardTimeout, MaxAttempts: c.RetryMaxAttempts,
		RetryBase: c.RetryBase, RetryCap: c.RetryCap, IntervalBreakerConfig: c.IntervalBreakerConfig}
}

// schedOptions are the scheduler's settings.
func (r *Role) schedOptions(c Config) drr.Options {
	return drr.Options{Slots: c.SchedInflight, QueueCap: c.QueueCap, TenantQueueCap: c.TenantQueueCap,
		Quantum: c.DRRQuantum, MaxWait: c.MaxQueueWait, Metrics: r.opt.Metrics, Role: roleName,
		Label: func(t string) string { return r.label(tenant.ID(t)) }, OnDrop: r.shed.Dropped, OnWaiting: r.shed.Observe}
}

// siteOptions are the /n settings.
func (c Config) siteOptions() sites.Options {
	return sites.Options{NameCacheTTL: c.NameCacheTTL, CacheControl: c.NamesCacheControl,
		ManifestMaxBytes: c.ManifestMaxBytes, ManifestCacheBytes: c.ManifestCacheBytes}
}

// build makes the links, admission state, scheduler and listener of cfg.
func (r *Role) build(cfg Config) error {
	p, err := newPolicy(cfg)
	if err != nil {
		return err
	}
	r.policy.Store(p)
	if r.ups, err = r.newUpstreams(cfg); err != nil {
		return fmt.Errorf("gateway: upstreams: %w", err)
	}
	r.met = newGatewayMetrics(r.opt.Metrics)
	r.rej = admission.NewRejections(r.opt.Metrics, roleName, func(t string) string { return r.label(tenant.ID(t)) })
	if err := r.buildTenants(cfg); err != nil {
		return err
	}
	r.shed = admission.NewShedder(cfg.QueueCap, cfg.ShedWritesAt, cfg.ShedClearAfter, r.opt.Metrics)
	r.sched = drr.New(r.schedOptions(cfg))
	r.streams = admission.NewStreamGate(cfg.MaxStreams)
	r.fetch = provider.New(provider.Options{HTTP: &http.Client{Transport: r.ups.providers},
		MaxProviders: cfg.MaxProviders, Timeout: cfg.ForwardTimeout, Breaker: cfg.IntervalBreakerConfig,
		Metrics: r.opt.Metrics, Log: r.Log})
	so := cfg.siteOptions()
	so.Objects, so.Metrics, so.Log = objectSource{r}, r.opt.Metrics, r.Log
	if r.ups.indexClient != nil {
		so.Resolver = sites.IndexResolver(r.ups.indexClient)
	}
	r.sites = sites.New(so)
	s := r.NewServer(httpx.ServerOptions{
		Metrics: r.opt.Metrics.Set(), Limits: cfg.Ingress.Limits(),
		Streaming:     func(string, string) bool { return true }, // docs/gateway.md §3.1–3.2 and docs/gateway.md §3.8 are the gateway's own
		LongLived:     func(_, route string) bool { return route == "/registry/stream" },
		ConnCapExempt: func(ip string) bool { return r.policy.Load().isTrusted(ip) },
		OnConnCap:     func() { r.rej.Rejected("", admission.ReasonConnCap) }})
	e := s.Echo()
	r.mount(e)
	if r.opt.Ops != nil {
		r.opt.Ops(e)
	}
	return nil
}

// buildTenants makes the tenant table (config alone until a registry
// version applies), the per-tenant states and, with a registry, the
// follower.
func (r *Role) buildTenants(cfg Config) error {
	items, err := cfg.tenantItems()
	if err != nil {
		return err
	}
	// The states read the table only per request; the first table is in
	// place before the listener binds.
	r.states, err = tenant.NewStates(tenant.Options{MaxStates: cfg.MaxTenantStates, Params: r.params})
	if err != nil {
		return fmt.Errorf("gateway: tenant states: %w", err)
	}
	if r.ups.registryClient == nil {
		r.applyConfigTable(cfg, items)
		return nil
	}
	fo := tenants.FollowerOptions{Client: r.ups.registryClient, Defaults: cfg.tenantDefaults(), Config: items,
		Apply: r.applyTable, Metrics: r.opt.Metrics, Log: r.Log}
	if r.opt.Local.Registry != nil {
		fo.Bus = r.opt.Bus // co-located: RegistryUpdated events (docs/gateway.md §7)
	}
	r.follower = tenants.NewFollower(fo) // applies the config table at once
	return nil
}

// applyConfigTable applies the table of config tenants alone (no registry).
func (r *Role) applyConfigTable(cfg Config, items []tenants.Item) {
	table, _ := tenants.Build(cfg.tenantDefaults(), items, nil) // items are validated
	r.applyTable(table)
}

// params is the tenant.ParamsFunc over the table in force.
func (r *Role) params(id tenant.ID) tenant.Params { return r.table.Load().Params(id) }

// applyTable swaps in a new tenant table and refreshes what depends on it:
// the buckets' parameters and the metric label set.
func (r *Role) applyTable(t *tenants.Table) {
	r.table.Store(t)
	r.labels.Store(admission.NewLabeler(t.Listed()))
	if err := r.states.SetParams(r.params); err != nil {
		r.Log.Warn().Err(err).Msg("tenant parameters refused")
	}
	if t.FromRegistry() {
		r.Log.Info().Uint64("version", t.Version()).Int("tenants", len(t.Listed())).Msg("tenant table applied")
	}
}

// label is the tenant label of the docs/gateway.md §10 metrics ("other" for no tenant).
func (r *Role) label(id tenant.ID) string {
	return r.labels.Load().Label(string(id))
}

// reconfigure applies a validated config to the running role.
func (r *Role) reconfigure(old, n Config) error {
	p, err := newPolicy(n)
	if err != nil {
		return err
	}
	items, err := n.tenantItems()
	if err != nil {
		return err
	}
	r.policy.Store(p)
	r.Server().SetLimits(n.Ingress.Limits())
	r.ups.setPolicy(n.forwardPolicy())
	r.sched.SetOptions(r.schedOptions(n))
	r.shed.SetParams(n.QueueCap, n.ShedWritesAt, n.ShedClearAfter)
	r.streams.SetMax(n.MaxStreams)
	r.fetch.SetMaxProviders(n.MaxProviders)
	r.fetch.SetTimeout(n.ForwardTimeout)
	if old.IntervalBreakerConfig != n.IntervalBreakerConfig {
		r.fetch.SetBreaker(n.IntervalBreakerConfig)
	}
	r.sites.SetOptions(n.siteOptions())
	if r.follower != nil {
		r.follower.SetConfig(n.tenantDefaults(), items)
	} else {
		r.applyConfigTable(n, items)
	}
	return nil
}

// serveSite answers GET|HEAD /n/{name}[/{path...}] (docs/gateway.md §5).
func (r *Role) serveSite(c echo.Context, cl *call) error {
	if r.ups.indexClient == nil {
		return errNoUpstream(indexapi.RoleName)
	}
	req := c.Request()
	esc := strings.TrimPrefix(req.URL.EscapedPath(), "/n/")
	name, rest, slash := strings.Cut(esc, "/")
	if slash {
		rest = "/" + rest
	}
	// Each upstream step bounds itself (the links and clients by the call's
	// deadline to headers, bodies per chunk), so large entries can stream.
	return r.sites.Serve(c.Response(), req.WithContext(withCall(req.Context(), cl)), name, rest, req.URL.RawQuery)
}
