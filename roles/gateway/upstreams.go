package gateway

import (
	"context"
	"net/http"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/edge/edgeapi"
	"github.com/ronhq/ron/roles/gateway/upstream"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexapi/clusterindex"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/storage/storageapi"
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
func (l Locals) colocated(role string) bool {
	switch role {
	case storageapi.RoleName:
		return l.Storage != nil
	case indexapi.RoleName:
		return l.Index != nil
	case edgeapi.RoleName:
		return l.Edge != nil
	case registryapi.RoleName:
		return l.Registry != nil
	}
	return false
}

// upstreams are the gateway's links to the four roles (nil: none) and the
// typed clients its own logic uses (providers for /o, names for /n,
// tenants from the registry). In a cluster, the roles without a link are
// served by members (cluster; nil when the cluster is off).
type upstreams struct {
	storage, index, edge, registry *upstream.Link
	cluster                        *members

	indexClient    indexapi.Client
	registryClient registryapi.Client
	storageURL     func() string
	transport      *http.Transport // the HTTP links
	providers      *http.Transport // provider reads (untrusted URLs)
}

// newUpstreams builds the links of cfg: in-process for co-located roles,
// HTTP for the configured URLs.
func (r *Role) newUpstreams(cfg Config) (*upstreams, error) {
	u := &upstreams{transport: newTransport(), providers: providerTransport(), storageURL: func() string { return cfg.StorageURL }}
	loc := r.opt.Local
	token := r.linkToken(cfg)
	principal := upstream.LinkPrincipal(!cfg.PublicReads)
	link := func(name string, local func() http.Handler, url string) (*upstream.Link, error) {
		opt := upstream.Options{Name: name, Token: token, Principal: principal, Transport: u.transport,
			Policy: cfg.forwardPolicy(), Metrics: r.opt.Metrics, Log: r.Log}
		switch {
		case local != nil:
			opt.Handler = lazyHandler(local)
		case url != "":
			opt.BaseURL = url
		default:
			return nil, nil
		}
		return upstream.New(opt)
	}
	var err error
	for _, l := range []struct {
		dst   **upstream.Link
		name  string
		local func() http.Handler
		url   string
	}{{&u.storage, storageapi.RoleName, loc.Storage, cfg.StorageURL}, {&u.index, indexapi.RoleName, loc.Index, cfg.IndexURL},
		{&u.edge, edgeapi.RoleName, loc.Edge, cfg.EdgeURL}, {&u.registry, registryapi.RoleName, loc.Registry, cfg.RegistryURL}} {
		if *l.dst, err = link(l.name, l.local, l.url); err != nil {
			return nil, err
		}
	}
	u.clients(loc, cfg, token)
	if r.opt.Cluster != nil {
		if cfg.IndexURL != "" {
			u.indexClient = clusterindex.Wrap(u.indexClient, r.opt.Cluster) // the co-located one comes wrapped
		}
		u.cluster = r.newMembers(u, cfg)
	}
	return u, nil
}

// static returns role's co-located or configured link (nil: none).
func (u *upstreams) static(role string) *upstream.Link {
	switch role {
	case storageapi.RoleName:
		return u.storage
	case indexapi.RoleName:
		return u.index
	case edgeapi.RoleName:
		return u.edge
	case registryapi.RoleName:
		return u.registry
	}
	return nil
}

// link returns the link of a request to role: the co-located or configured
// one, else a cluster member's (key ranks the members, nil: this
// gateway's own order); nil when there is none.
func (u *upstreams) link(role string, key []byte) *upstream.Link {
	l, _ := u.linkURL(role, key)
	return l
}

// linkURL is link plus the base URL the link reaches: the member's, the
// configured storage URL, or the co-located storage's advertised one.
func (u *upstreams) linkURL(role string, key []byte) (*upstream.Link, string) {
	if l := u.static(role); l != nil {
		if role == storageapi.RoleName {
			return l, u.storageURL()
		}
		return l, ""
	}
	if u.cluster == nil {
		return nil, ""
	}
	return u.cluster.pick(role, key)
}

// has reports whether role may have a link: a static one, or a pool of
// members (which may be empty now and fill later).
func (u *upstreams) has(role string) bool {
	return u.static(role) != nil || u.cluster != nil && u.cluster.pools[role] != nil
}

// clients builds the typed index and registry clients.
func (u *upstreams) clients(loc Locals, cfg Config, token func(context.Context) (string, error)) {
	opt := client.Options{Role: roleName, HTTP: &http.Client{Transport: u.transport}, Timeout: cfg.ForwardTimeout}
	switch {
	case loc.IndexClient != nil:
		u.indexClient = loc.IndexClient() // the index started before the gateway
	case cfg.IndexURL != "":
		u.indexClient = indexapi.NewHTTPClient(cfg.IndexURL, token, opt)
	}
	switch {
	case loc.RegistryClient != nil:
		u.registryClient = loc.RegistryClient()
	case cfg.RegistryURL != "":
		u.registryClient = registryapi.NewHTTPClient(cfg.RegistryURL, token, opt)
	}
	if loc.StorageURL != nil {
		u.storageURL = loc.StorageURL
	}
}

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

// links lists the configured links.
func (u *upstreams) links() []*upstream.Link {
	var out []*upstream.Link
	for _, l := range []*upstream.Link{u.storage, u.index, u.edge, u.registry} {
		if l != nil {
			out = append(out, l)
		}
	}
	return out
}

// setPolicy applies live forwarding settings to every link.
func (u *upstreams) setPolicy(p upstream.Policy) {
	for _, l := range u.links() {
		l.SetPolicy(p)
	}
	if u.cluster != nil {
		u.cluster.setPolicy(p)
	}
}

// breakerStates maps each link to its breaker state.
func (u *upstreams) breakerStates() map[string]string {
	out := map[string]string{}
	for _, l := range u.links() {
		out[l.Name()] = l.BreakerState()
	}
	if u.cluster != nil {
		u.cluster.breakerStates(out)
	}
	return out
}

// describe lists the links as "name (in-process)" or "name (http)".
func (u *upstreams) describe() []string {
	var out []string
	for _, l := range u.links() {
		how := "http"
		if l.InProcess() {
			how = "in-process"
		}
		out = append(out, l.Name()+" ("+how+")")
	}
	if u.cluster != nil {
		out = append(out, u.cluster.describe()...)
	}
	return out
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
