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
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/topology"
)

// upstreamRoles are the four upstreams, in the order of docs/gateway.md §2.
var upstreamRoles = [...]string{storageapi.RoleName, indexapi.RoleName, edgeapi.RoleName, registryapi.RoleName}

// memberLink is a cluster member's link and the policy it last received.
type memberLink struct {
	link *upstream.Link
	pol  atomic.Pointer[upstream.Policy]
}

// members are the upstreams a cluster serves (docs/gateway.md §2): every
// role that is neither co-located nor configured by URL gets a pool of
// links, one per alive member running it (one breaker each), and the index
// and registry typed clients fail over between members. Each pool's Run is
// the one goroutine that builds and retires its values.
type members struct {
	m        cluster.Membership
	pools    map[string]*topology.Pool[*memberLink]
	pol      atomic.Pointer[upstream.Policy] // the forwarding policy in force
	index    *clusterindex.Members           // nil: the index is not member-served
	registry *topology.Pool[*registryapi.HTTPClient]
}

// newMembers builds the member pools of the roles u has no link for, and
// the typed clients u lacks. Member links are trusted links carrying the
// token minted from the node's root key (members share it, docs/cluster.md §2;
// upstream_token is for configured URLs of another cluster).
func (r *Role) newMembers(u *upstreams, cfg Config) *members {
	ms := &members{m: r.opt.Cluster, pools: map[string]*topology.Pool[*memberLink]{}}
	pol := cfg.forwardPolicy()
	ms.pol.Store(&pol)
	token := upstream.MintLinkToken(r.opt.Keys, !cfg.PublicReads)
	for _, role := range upstreamRoles {
		if u.static(role) != nil {
			continue
		}
		ms.pools[role] = topology.NewPool(topology.PoolOptions[*memberLink]{Membership: ms.m, Role: role,
			Zone: r.opt.Node.Zone, Log: r.Log, Build: func(id, url string) (*memberLink, error) {
				return ms.newLink(r, u, role, id, url, token)
			}})
		upstream.RegisterStateGauges(r.opt.Metrics, role, func() string { return ms.state(role) })
	}
	opt := client.Options{Role: roleName, HTTP: &http.Client{Transport: u.transport}, Timeout: cfg.ForwardTimeout}
	if u.indexClient == nil {
		ms.index = clusterindex.NewMembers(clusterindex.MembersOptions{Membership: ms.m, Zone: r.opt.Node.Zone,
			Token: token, Client: opt, Log: r.Log})
		u.indexClient = ms.index
	}
	if u.registryClient == nil {
		opt.Retries = -1 // the next member is the retry
		ms.registry = topology.NewPool(topology.PoolOptions[*registryapi.HTTPClient]{Membership: ms.m, Role: registryapi.RoleName,
			Zone: r.opt.Node.Zone, Log: r.Log, Retire: (*registryapi.HTTPClient).Close,
			Build: func(_, url string) (*registryapi.HTTPClient, error) {
				return registryapi.NewHTTPClient(url, token, opt), nil
			}})
		u.registryClient = &registryMembers{pool: ms.registry}
	}
	return ms
}

// newLink is the link of member id serving role at url.
func (ms *members) newLink(r *Role, u *upstreams, role, id, url string, token func(context.Context) (string, error)) (*memberLink, error) {
	pol := ms.pol.Load()
	l, err := upstream.New(upstream.Options{Name: role, BaseURL: url, Token: token, Transport: u.transport,
		Policy: *pol, Metrics: r.opt.Metrics, NoStateGauge: true, Log: r.Log.With().Str("member", id).Logger()})
	if err != nil {
		return nil, fmt.Errorf("gateway: member %s: %w", id, err)
	}
	ml := &memberLink{link: l}
	ml.pol.Store(pol)
	return ml, nil
}

// pick returns the link a request for role should use, and its base URL:
// the first member in Ranked(key) order whose breaker is not open, else
// the first member (its open breaker answers 503 at once); nil with no
// member. The link gets the policy in force first.
func (ms *members) pick(role string, key []byte) (*upstream.Link, string) {
	p := ms.pools[role]
	if p == nil {
		return nil, ""
	}
	es := p.Ranked(key)
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
	if pol := ms.pol.Load(); e.Value.pol.Load() != pol {
		e.Value.link.SetPolicy(*pol)
		e.Value.pol.Store(pol)
	}
	return e.Value.link, e.URL
}

// state is the ron_breaker_state of a member-served role: that of the
// link a keyless request would use ("closed" with no member: no breaker).
func (ms *members) state(role string) string {
	if l, _ := ms.pick(role, nil); l != nil {
		return l.BreakerState()
	}
	return client.StateClosed
}

// setPolicy makes p the policy of every member link (applied when a link
// is next picked, and to links built from now on).
func (ms *members) setPolicy(p upstream.Policy) { ms.pol.Store(&p) }

// start runs the pools' owner goroutines as tasks of g.
func (ms *members) start(g *runtime.TaskGroup) {
	for _, role := range upstreamRoles {
		if p := ms.pools[role]; p != nil {
			g.Go("members-"+role, p.Run)
		}
	}
	if ms.index != nil {
		g.Go("members-index-client", ms.index.Run)
	}
	if ms.registry != nil {
		g.Go("members-registry-client", ms.registry.Run)
	}
}

// breakerStates adds each member link's state as "<role>@<member>".
func (ms *members) breakerStates(out map[string]string) {
	for role, p := range ms.pools {
		for _, e := range p.Entries() {
			out[role+"@"+e.ID] = e.Value.link.BreakerState()
		}
	}
}

// describe lists the member-served roles as "<role> (cluster: N members)".
func (ms *members) describe() []string {
	var out []string
	for _, role := range upstreamRoles {
		if p := ms.pools[role]; p != nil {
			out = append(out, fmt.Sprintf("%s (cluster: %d members)", role, p.Len()))
		}
	}
	return out
}

// waitRegistry blocks until the registry pool has a member or ctx ends
// (false).
func (ms *members) waitRegistry(ctx context.Context) bool {
	return ms.registry.WaitFor(ctx, func(es []topology.Entry[*registryapi.HTTPClient]) bool { return len(es) > 0 })
}
