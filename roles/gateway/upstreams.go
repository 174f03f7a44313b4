package gateway

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/edge/edgeapi"
	"github.com/ronhq/ron/roles/gateway/upstream"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexapi/clusterindex"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/topology"
)

// Locals are the roles running in the gateway's process (docs/gateway.md
// §2). A nil func means the role is not co-located. The funcs are called
// per request: the roles start before the gateway, and a nil answer (not
// started) is a 503 not_ready.
type Locals struct {
	Storage, Index, Edge, Registry func() http.Handler
	IndexClient                    func() indexapi.Client
	RegistryClient                 func() registryapi.Client
	// StorageURL is the co-located storage's advertised URL, skipped among
	// the index's providers (it was already asked).
	StorageURL func() string
}

// colocated reports whether role runs in this process.
func (l Locals) colocated(role string) bool { return l.handler(role) != nil }

// handler returns the handler func of a co-located role (nil: not here).
func (l Locals) handler(role string) func() http.Handler {
	switch role {
	case storageapi.RoleName:
		return l.Storage
	case indexapi.RoleName:
		return l.Index
	case edgeapi.RoleName:
		return l.Edge
	case registryapi.RoleName:
		return l.Registry
	}
	return nil
}

// upstreamURL is the configured base URL of role ("" when none).
func (c Config) upstreamURL(role string) string {
	for _, u := range c.upstreamURLs() {
		if u.role == role {
			return u.url
		}
	}
	return ""
}

// upstreams are the gateway's routes to the four roles (docs/gateway.md
// §2), each found by topology.Find: a co-located role or a configured URL
// is one fixed link, a role members serve is a pool of links (one per
// alive member, one breaker each). Beside the links are the typed clients
// the gateway's own logic uses (providers for /o, names for /n, tenants
// from the registry), found the same way.
type upstreams struct {
	routes map[string]*topology.Route[*policyLink] // absent: no way to the role
	pol    atomic.Pointer[upstream.Policy]         // the forwarding policy in force

	indexClient    indexapi.Client
	registryClient registryapi.Client
	indexMembers   *clusterindex.Members                   // nil unless members serve the index client
	registryPool   *topology.Pool[*registryapi.HTTPClient] // nil unless members serve the registry client
	storageURL     func() string
	transport      *http.Transport // the HTTP links
	providers      *http.Transport // provider reads (untrusted URLs)
}

// newUpstreams builds the routes and clients of cfg.
func (r *Role) newUpstreams(cfg Config) (*upstreams, error) {
	u := &upstreams{routes: map[string]*topology.Route[*policyLink]{}, transport: newTransport(),
		providers: providerTransport(), storageURL: func() string { return cfg.StorageURL }}
	if r.opt.Local.StorageURL != nil {
		u.storageURL = r.opt.Local.StorageURL
	}
	pol := cfg.forwardPolicy()
	u.pol.Store(&pol)
	b := linkBuilder{r: r, u: u, cfg: cfg, token: r.linkToken(cfg), members: upstream.MintLinkToken(r.opt.Keys, !cfg.PublicReads)}
	for _, role := range upstreamRoles {
		route, err := b.route(role)
		if err != nil {
			return nil, err
		}
		if route != nil {
			u.routes[role] = route
		}
	}
	b.clients()
	return u, nil
}

// link returns the link of a request to role (key ranks the members, nil:
// this gateway's own order); nil when there is none.
func (u *upstreams) link(role string, key []byte) *upstream.Link {
	l, _ := u.linkURL(role, key)
	return l
}

// linkURL is link plus the base URL the link reaches: the member's, the
// configured storage URL, or the co-located storage's advertised one. Of
// the members, the first in Ranked(key) order whose breaker is not open is
// picked, else the first (its open breaker answers 503 at once). The link
// gets the policy in force first.
func (u *upstreams) linkURL(role string, key []byte) (*upstream.Link, string) {
	es := u.routes[role].Ranked(key)
	if len(es) == 0 {
		return nil, ""
	}
	e := es[0]
	for _, c := range es {
		if c.Value.link.BreakerState() != client.StateOpen {
			e = c
			break
		}
	}
	e.Value.apply(u.pol.Load())
	return e.Value.link, e.URL
}

// has reports whether role may have a link: a fixed one, or a pool of
// members (which may be empty now and fill later).
func (u *upstreams) has(role string) bool { return u.routes[role] != nil }

// linkToken is the bearer of HTTP links: upstream_token when set, else a
// token minted from the node's root key (docs/gateway.md §2).
func (r *Role) linkToken(cfg Config) func(context.Context) (string, error) {
	if cfg.UpstreamToken != "" {
		tok := cfg.UpstreamToken
		return func(context.Context) (string, error) { return tok, nil }
	}
	return upstream.MintLinkToken(r.opt.Keys, !cfg.PublicReads)
}

// newTransport is the HTTP transport of the gateway's upstream calls.
// The link's deadline bounds the wait for response headers.
func newTransport() *http.Transport {
	return client.NewTransport(client.TransportOptions{MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second})
}

// providerTransport is the transport of provider reads. Provider URLs come
// from the index and are not trusted: besides the URL checks of the
// fetcher, a host name that resolves to a link-local, multicast or
// unspecified address is refused when dialling (package safedial).
func providerTransport() *http.Transport {
	return client.NewTransport(client.TransportOptions{MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second,
		Untrusted: true})
}

// fixed lists the fixed links (co-located or configured), in
// upstreamRoles order.
func (u *upstreams) fixed() []*policyLink {
	var out []*policyLink
	for _, role := range upstreamRoles {
		if l, ok := u.routes[role].Fixed(); ok {
			out = append(out, l)
		}
	}
	return out
}

// pools lists the roles members serve with their pools, in upstreamRoles
// order.
func (u *upstreams) pools() (roles []string, pools []*topology.Pool[*policyLink]) {
	for _, role := range upstreamRoles {
		if p := u.routes[role].Pool(); p != nil {
			roles, pools = append(roles, role), append(pools, p)
		}
	}
	return roles, pools
}

// setPolicy applies live forwarding settings: at once to the fixed links,
// to a member link when it is next picked (and to links built from now on).
func (u *upstreams) setPolicy(p upstream.Policy) {
	u.pol.Store(&p)
	for _, l := range u.fixed() {
		l.apply(&p)
	}
}

// breakerStates maps each link to its breaker state: a fixed link by its
// name, a member's as "<role>@<member>".
func (u *upstreams) breakerStates() map[string]string {
	out := map[string]string{}
	for _, l := range u.fixed() {
		out[l.link.Name()] = l.link.BreakerState()
	}
	roles, pools := u.pools()
	for i, p := range pools {
		for _, e := range p.Entries() {
			out[roles[i]+"@"+e.ID] = e.Value.link.BreakerState()
		}
	}
	return out
}

// describe lists the routes as "name (in-process)", "name (http)" or
// "<role> (cluster: N members)".
func (u *upstreams) describe() []string {
	var out []string
	for _, l := range u.fixed() {
		how := topology.Configured
		if l.link.InProcess() {
			how = topology.InProcess
		}
		out = append(out, l.link.Name()+" ("+how.String()+")")
	}
	roles, pools := u.pools()
	for i, p := range pools {
		out = append(out, fmt.Sprintf("%s (cluster: %d members)", roles[i], p.Len()))
	}
	return out
}

// start runs the pools' owner goroutines as tasks of g.
func (u *upstreams) start(g *runtime.TaskGroup) {
	roles, pools := u.pools()
	for i, p := range pools {
		g.Go("members-"+roles[i], p.Run)
	}
	if u.indexMembers != nil {
		g.Go("members-index-client", u.indexMembers.Run)
	}
	if u.registryPool != nil {
		g.Go("members-registry-client", u.registryPool.Run)
	}
}

// waitRegistry blocks until the registry pool has a member or ctx ends
// (false).
func (u *upstreams) waitRegistry(ctx context.Context) bool {
	return u.registryPool.WaitFor(ctx, func(es []topology.Entry[*registryapi.HTTPClient]) bool { return len(es) > 0 })
}

// close releases idle upstream and provider connections.
func (u *upstreams) close() {
	u.transport.CloseIdleConnections()
	u.providers.CloseIdleConnections()
}

// lazyHandler serves through a co-located role's handler, looked up per
// request; before the role has started it answers 503 not_ready.
type lazyHandler func() http.Handler

func (f lazyHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	h := f()
	if h == nil {
		httpx.WriteError(w, req.Header.Get(httpx.HeaderCorrID),
			httpx.NewError(http.StatusServiceUnavailable, httpx.CodeNotReady, "the co-located role has not started").WithRetryAfter(1))
		return
	}
	h.ServeHTTP(w, req)
}
