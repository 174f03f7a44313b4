package edge

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/httpx/inproc"
	"github.com/ronhq/ron/roles/edge/objects"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexapi/clusterindex"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/topology"
	"github.com/ronhq/ron/store"
)

// Locals are the roles running in the edge's process (docs/edge.md §3). A
// nil func means the role is not co-located. The roles start before the
// edge, but the edge is built before any of them starts, so Storage is
// looked up per request (nil: 503 not_ready) and IndexClient at Start.
type Locals struct {
	Storage     func() http.Handler
	StorageURL  func() string // the co-located storage's advertised URL, skipped among providers
	IndexClient func() indexapi.Client
}

// colocated reports whether role runs in this process.
func (l Locals) colocated(role string) bool {
	switch role {
	case storageapi.RoleName:
		return l.Storage != nil
	case indexapi.RoleName:
		return l.IndexClient != nil
	}
	return false
}

// inProcessBase is the base URL of the in-process storage source.
const inProcessBase = "http://storage.inproc"

// LinkPrincipalID is the Claims.ID of the principal of in-process fills.
const LinkPrincipalID = "edge-link"

// linkScopes are the scopes of the edge's fills: reads only.
var linkScopes = []string{"storage:read", "index:read"}

// linkPrincipal is the principal in-process fills carry: the scopes of the
// minted token, no tenant, no expiry. Shared: read-only.
var linkPrincipal = &auth.Claims{ID: LinkPrincipalID, Scopes: linkScopes}

// sources are the /o fill sources of docs/edge.md §3 and what they hold open.
type sources struct {
	storage        *objects.Source
	providers      func(ctx context.Context, id store.ID) ([]string, error)
	providerClient *http.Client
	index          indexapi.Client
	storageURL     func() string
	maxProviders   func() int

	region                       string // the providers lookup's region: the node's zone ("" = the index's)
	transport, providerTransport *http.Transport
	httpIndex                    *indexapi.HTTPClient  // closed at stop; nil when in-process or none
	members                      *clusterindex.Members // the index members' clients; nil unless they serve
	describe                     []string
}

// sourceOptions are what newSources needs from the role.
type sourceOptions struct {
	cfg          Config
	local        Locals
	token        func() string // bearer of HTTP sources ("" = none)
	maxProviders func() int
	opt          client.Options // index client defaults: metrics, role
	cluster      cluster.Membership
	zone         string
	memberToken  func() string // bearer of member calls: minted from the root key
}

// newSources builds the sources of cfg: the in-process storage, else
// storage_url; the co-located index, else index_url, for providers.
func newSources(so sourceOptions) *sources {
	s := &sources{transport: newTransport(), providerTransport: providerTransport(), maxProviders: so.maxProviders,
		storageURL: func() string { return so.cfg.StorageURL }, region: so.zone}
	s.providerClient = &http.Client{Transport: s.providerTransport, CheckRedirect: client.NoRedirects}
	// Storage is read in-process or at storage_url; members' copies are
	// reached as providers through the index.
	switch topology.Find(so.local.Storage != nil, nil, so.cfg.StorageURL) {
	case topology.InProcess:
		s.storage = &objects.Source{Name: storageapi.RoleName, BaseURL: inProcessBase,
			Client:  &http.Client{Transport: inproc.New(lazyHandler(so.local.Storage)), CheckRedirect: client.NoRedirects},
			Prepare: withLinkPrincipal}
		s.describe = append(s.describe, "storage (in-process)")
		if so.local.StorageURL != nil {
			s.storageURL = so.local.StorageURL
		}
	case topology.Configured:
		s.storage = &objects.Source{Name: storageapi.RoleName, BaseURL: strings.TrimSuffix(so.cfg.StorageURL, "/"),
			Client:  &http.Client{Transport: s.transport, CheckRedirect: client.NoRedirects},
			Prepare: withBearer(so.token)}
		s.describe = append(s.describe, "storage (http)")
	}
	s.buildIndex(so)
	if s.index != nil {
		s.providers = s.providerURLs
	}
	return s
}

// buildIndex picks the index of the providers lookup: the co-located one,
// else index_url, else (in a cluster) the alive index members. In a
// cluster the HTTP ones order providers alive first (clusterindex.Wrap;
// the co-located client comes wrapped).
func (s *sources) buildIndex(so sourceOptions) {
	opt := so.opt
	opt.HTTP, opt.Timeout = &http.Client{Transport: s.transport}, so.cfg.FillTimeout
	place := topology.Find(so.local.IndexClient != nil, so.cluster, so.cfg.IndexURL)
	switch place {
	case topology.InProcess:
		s.index = so.local.IndexClient()
	case topology.Configured:
		s.httpIndex = indexapi.NewHTTPClient(so.cfg.IndexURL, bearerOf(so.token), opt)
		s.index = clusterindex.Wrap(s.httpIndex, so.cluster)
	case topology.Members:
		s.members = clusterindex.NewMembers(clusterindex.MembersOptions{Membership: so.cluster, Zone: so.zone,
			Token: bearerOf(so.memberToken), Client: opt})
		s.index = s.members
	default:
		return
	}
	s.describe = append(s.describe, "index ("+place.String()+")")
}

// bearerOf adapts a token function to the clients' Token.
func bearerOf(tok func() string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return tok(), nil }
}

// providerURLs lists up to max_providers provider base URLs of id from the
// index, without the storage source already asked. An index that knows
// none (404) is an empty list.
func (s *sources) providerURLs(ctx context.Context, id store.ID) ([]string, error) {
	n := s.maxProviders()
	list, err := s.index.Providers(ctx, id, s.region, min(n+1, 64))
	if err != nil {
		var he *httpx.Error
		if errors.As(err, &he) && he.Status == http.StatusNotFound {
			return nil, nil
		}
		return nil, err
	}
	self := strings.TrimSuffix(s.storageURL(), "/")
	out := make([]string, 0, min(len(list.Providers), n))
	for _, p := range list.Providers {
		if addr := strings.TrimSuffix(p.Addr, "/"); addr != "" && addr != self && len(out) < n {
			out = append(out, addr)
		}
	}
	return out, nil
}

// close releases idle connections of the HTTP sources.
func (s *sources) close() {
	if s.httpIndex != nil {
		s.httpIndex.Close()
	}
	s.transport.CloseIdleConnections()
	s.providerTransport.CloseIdleConnections()
}

// withLinkPrincipal makes an in-process request act as the edge's link
// principal (auth.WithClaims): co-located storage with private reads
// accepts it without a token.
func withLinkPrincipal(req *http.Request) {
	*req = *req.WithContext(auth.WithClaims(req.Context(), linkPrincipal))
}

// withBearer returns a Prepare adding "Authorization: Bearer <token>" when
// token gives one.
func withBearer(token func() string) func(*http.Request) {
	return func(req *http.Request) {
		if t := token(); t != "" {
			req.Header.Set("Authorization", "Bearer "+t)
		}
	}
}

// lazyHandler serves through a co-located role's handler looked up per
// request; before the role has started it answers 503 not_ready.
type lazyHandler func() http.Handler

func (f lazyHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	h := f()
	if h == nil {
		httpx.WriteError(w, req.Header.Get(httpx.HeaderCorrID),
			httpx.NewError(http.StatusServiceUnavailable, httpx.CodeNotReady, "the co-located storage role has not started"))
		return
	}
	h.ServeHTTP(w, req)
}

// newTransport is the transport of HTTP sources (storage_url, index_url).
// Each fill bounds its own attempts, the wait for headers included.
func newTransport() *http.Transport {
	return client.NewTransport(client.TransportOptions{MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second})
}
