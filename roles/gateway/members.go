package gateway

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/roles/edge/edgeapi"
	"github.com/ronhq/ron/roles/gateway/upstream"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexapi/clusterindex"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime/topology"
)

// upstreamRoles are the four upstreams, in the order of docs/gateway.md §2.
var upstreamRoles = [...]string{storageapi.RoleName, indexapi.RoleName, edgeapi.RoleName, registryapi.RoleName}

// policyLink is a link and the forwarding policy it last received.
type policyLink struct {
	link *upstream.Link
	pol  atomic.Pointer[upstream.Policy]
}

// newPolicyLink wraps l, which was built with pol.
func newPolicyLink(l *upstream.Link, pol *upstream.Policy) *policyLink {
	pl := &policyLink{link: l}
	pl.pol.Store(pol)
	return pl
}

// apply gives the link pol unless it has it already.
func (l *policyLink) apply(pol *upstream.Policy) {
	if l.pol.Load() != pol {
		l.link.SetPolicy(*pol)
		l.pol.Store(pol)
	}
}

// linkBuilder builds the gateway's routes and clients. Fixed links to a
// configured URL carry token (upstream_token, else minted); member links
// and clients carry the token minted from the node's root key (members
// share it, docs/cluster.md §2; upstream_token is for configured URLs of
// another cluster).
type linkBuilder struct {
	r              *Role
	u              *upstreams
	cfg            Config
	token, members func(context.Context) (string, error)
}

// route builds the route to role where topology.Find puts it: a fixed
// in-process or HTTP link, a pool of member links, or none (nil).
func (b linkBuilder) route(role string) (*topology.Route[*policyLink], error) {
	local, url := b.r.opt.Local.handler(role), b.cfg.upstreamURL(role)
	pol := b.u.pol.Load()
	opt := upstream.Options{Name: role, Token: b.token, Principal: upstream.LinkPrincipal(!b.cfg.PublicReads),
		Transport: b.u.transport, Policy: *pol, Metrics: b.r.opt.Metrics, Log: b.r.Log}
	switch topology.Find(local != nil, b.r.opt.Cluster, url) {
	case topology.InProcess:
		opt.Handler = lazyHandler(local)
	case topology.Configured:
		opt.BaseURL = url
	case topology.Members:
		return topology.PoolRoute(b.memberPool(role)), nil
	default:
		return nil, nil
	}
	l, err := upstream.New(opt)
	if err != nil {
		return nil, err
	}
	var urlOf func() string
	if role == storageapi.RoleName {
		urlOf = b.u.storageURL
	}
	return topology.FixedRoute(newPolicyLink(l, pol), urlOf), nil
}

// memberPool is the pool of links to the alive members running role, with
// the role's ron_breaker_state gauges: that of the link a keyless request
// would use ("closed" with no member: no breaker).
func (b linkBuilder) memberPool(role string) *topology.Pool[*policyLink] {
	r, u := b.r, b.u
	p := topology.NewPool(topology.PoolOptions[*policyLink]{Membership: r.opt.Cluster, Role: role,
		Zone: r.opt.Node.Zone, Log: r.Log, Build: func(id, url string) (*policyLink, error) {
			pol := u.pol.Load()
			l, err := upstream.New(upstream.Options{Name: role, BaseURL: url, Token: b.members, Transport: u.transport,
				Policy: *pol, Metrics: r.opt.Metrics, NoStateGauge: true, Log: r.Log.With().Str("member", id).Logger()})
			if err != nil {
				return nil, fmt.Errorf("gateway: member %s: %w", id, err)
			}
			return newPolicyLink(l, pol), nil
		}})
	upstream.RegisterStateGauges(r.opt.Metrics, role, func() string {
		if l, _ := u.linkURL(role, nil); l != nil {
			return l.BreakerState()
		}
		return client.StateClosed
	})
	return p
}

// clients builds the typed index and registry clients where
// topology.Find puts those roles. A configured index's answers are
// ordered by the membership in a cluster (clusterindex.Wrap; the
// co-located client comes wrapped).
func (b linkBuilder) clients() {
	r, u, loc := b.r, b.u, b.r.opt.Local
	opt := client.Options{Role: roleName, HTTP: &http.Client{Transport: u.transport}, Timeout: b.cfg.ForwardTimeout}
	switch topology.Find(loc.IndexClient != nil, r.opt.Cluster, b.cfg.IndexURL) {
	case topology.InProcess:
		u.indexClient = loc.IndexClient() // the index started before the gateway
	case topology.Configured:
		u.indexClient = clusterindex.Wrap(indexapi.NewHTTPClient(b.cfg.IndexURL, b.token, opt), r.opt.Cluster)
	case topology.Members:
		u.indexMembers = clusterindex.NewMembers(clusterindex.MembersOptions{Membership: r.opt.Cluster,
			Zone: r.opt.Node.Zone, Token: b.members, Client: opt, Log: r.Log})
		u.indexClient = u.indexMembers
	}
	switch topology.Find(loc.RegistryClient != nil, r.opt.Cluster, b.cfg.RegistryURL) {
	case topology.InProcess:
		u.registryClient = loc.RegistryClient()
	case topology.Configured:
		u.registryClient = registryapi.NewHTTPClient(b.cfg.RegistryURL, b.token, opt)
	case topology.Members:
		opt.Retries = -1 // the next member is the retry
		u.registryPool = topology.NewPool(topology.PoolOptions[*registryapi.HTTPClient]{Membership: r.opt.Cluster,
			Role: registryapi.RoleName, Zone: r.opt.Node.Zone, Log: r.Log, Retire: (*registryapi.HTTPClient).Close,
			Build: func(_, url string) (*registryapi.HTTPClient, error) {
				return registryapi.NewHTTPClient(url, b.members, opt), nil
			}})
		u.registryClient = &registryMembers{pool: u.registryPool}
	}
}
