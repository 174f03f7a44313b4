package node

import (
	"context"
	"net/http"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/edge"
	"github.com/ronhq/ron/roles/gateway"
	"github.com/ronhq/ron/roles/index"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexapi/clusterindex"
	"github.com/ronhq/ron/roles/registry"
	"github.com/ronhq/ron/roles/registry/httpapi"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/storage"
	"github.com/ronhq/ron/roles/storage/indexsink"
	"github.com/ronhq/ron/runtime"
)

// newRegistry wires the registry role.
func newRegistry(d *Deps) (runtime.Role, error) {
	return registry.New(registry.Options{
		Config:  d.Config.Registry,
		DataDir: d.Config.DataDir,
		Amnesia: d.Config.Amnesia,
		Log:     d.Log,
		Metrics: d.Metrics,
		Keys:    d.Keys,
		Bus:     d.Bus,
		Version: d.Version,
		Ops:     d.Ops,
	}), nil
}

// newIndex wires the index role; in cluster mode it owns records by
// rendezvous over the index members (docs/cluster.md §6).
func newIndex(d *Deps) (runtime.Role, error) {
	return index.New(index.Options{
		Config:        d.Config.Index,
		DataDir:       d.Config.DataDir,
		Amnesia:       d.Config.Amnesia,
		Log:           d.Log,
		Metrics:       d.Metrics,
		Keys:          d.Keys,
		Bus:           d.Bus,
		Version:       d.Version,
		Ops:           d.Ops,
		Zone:          d.Config.Cluster.Zone,
		Cluster:       d.Cluster,
		ClusterConfig: d.Config.Cluster,
		NodeID:        d.NodeID,
		NodeToken:     d.NodeToken,
	}), nil
}

// newStorage wires the storage role and its announcing (docs/storage.md §5):
// to the index role of this process when there is one, else to
// storage.index_urls, else (cluster mode) to an alive index member, else
// announcing is off and status says why.
func newStorage(d *Deps) (runtime.Role, error) {
	opt := storage.Options{
		Config:        d.Config.Storage,
		DataDir:       d.Config.DataDir,
		Amnesia:       d.Config.Amnesia,
		Log:           d.Log,
		Metrics:       d.Metrics,
		Keys:          d.Keys,
		Bus:           d.Bus,
		Version:       d.Version,
		Ops:           d.Ops,
		Cluster:       d.Cluster,
		ClusterConfig: d.Config.Cluster,
		NodeToken:     d.NodeToken,
	}
	var role *storage.Role
	sink, off, err := announceSink(d, func() string { return storageURL(d.Config.Storage, role) })
	if err != nil {
		return nil, err
	}
	if sink != nil {
		opt.Sink = sink
	} else {
		opt.AnnounceOff = off
	}
	role = storage.New(opt)
	return role, nil
}

// announceSink builds storage's Sink, or says why there is none. Its node
// is the cluster node id (cluster.node_id, else <data>/node.id) and its
// region the live cluster.zone.
func announceSink(d *Deps, addr func() string) (*indexsink.Sink, string, error) {
	sc := d.Config.Storage
	local, _ := d.Roles["index"].(*index.Role)
	if local == nil && len(sc.IndexURLs) == 0 && d.Cluster == nil {
		return nil, "no index: the index role is not enabled and storage.index_urls is empty", nil
	}
	node := d.NodeID
	if node == "" {
		var err error
		if node, err = resolveNodeID(d.Config); err != nil {
			return nil, "", err
		}
	}
	// index_token, when set, is applied by the role through Retarget (also
	// on reload); the minted token is the fallback: the node token in
	// cluster mode (it carries index:write), else an index:write one.
	opt := indexsink.Options{URLs: sc.IndexURLs, Node: node, Addr: addr, Metrics: d.Metrics,
		Token: indexsink.MintToken(d.Keys), Cluster: d.Cluster,
		Region: func() string { return d.live().Cluster.Zone }}
	if d.NodeToken != nil {
		opt.Token = d.NodeToken
	}
	if local != nil {
		opt.Local = localIndex{local}
	}
	s, err := indexsink.New(opt)
	return s, "", err
}

// storageURL is the storage base URL announced to the index: advertise_url,
// else http://<bound listener>.
func storageURL(c storage.Config, r *storage.Role) string {
	if c.AdvertiseURL != "" {
		return c.AdvertiseURL
	}
	return "http://" + r.Addr()
}

// localIndex announces to the index role of this process through its
// in-process client. The index starts before storage, so its handlers exist
// by the time storage announces; until then (or after a failed start) the
// answer is 503 not_ready, which the announcer retries.
type localIndex struct{ r *index.Role }

func (l localIndex) Announce(ctx context.Context, recs []indexapi.Announcement) (int, int, error) {
	h := l.r.Handlers()
	if h == nil {
		return 0, 0, httpx.NewError(http.StatusServiceUnavailable, httpx.CodeNotReady, "the local index has not started")
	}
	return index.NewLocalClient(h).Announce(ctx, recs)
}

// newEdge wires the edge role to the roles of this process (docs/edge.md
// §3): a co-located storage is its in-process /o source, a co-located index
// gives it providers.
func newEdge(d *Deps) (runtime.Role, error) {
	var l edge.Locals
	if st, ok := d.Roles["storage"].(*storage.Role); ok {
		l.Storage = st.Handler
		l.StorageURL = func() string { return storageURL(d.Config.Storage, st) }
	}
	if ix, ok := d.Roles["index"].(*index.Role); ok {
		l.IndexClient = localIndexClient(d, ix)
	}
	return edge.New(edge.Options{
		Config:  d.Config.Edge,
		DataDir: d.Config.DataDir,
		Amnesia: d.Config.Amnesia,
		Log:     d.Log,
		Metrics: d.Metrics,
		Keys:    d.Keys,
		Bus:     d.Bus,
		Version: d.Version,
		Ops:     d.Ops,
		Local:   l,
		Cluster: d.Cluster,
		Zone:    d.Config.Cluster.Zone,
	}), nil
}

// localIndexClient is a reader's client of the co-located index: in
// cluster mode wrapped so that providers whose node is not alive come last
// (docs/cluster.md §7).
func localIndexClient(d *Deps, ix *index.Role) func() indexapi.Client {
	return func() indexapi.Client {
		return clusterindex.Wrap(index.NewLocalClient(ix.Handlers()), d.Cluster)
	}
}

// newGateway wires the gateway role to the roles of this process: each
// co-located one is an in-process upstream (docs/gateway.md §2).
func newGateway(d *Deps) (runtime.Role, error) {
	return gateway.New(gateway.Options{
		Config:  d.Config.Gateway,
		Log:     d.Log,
		Metrics: d.Metrics,
		Keys:    d.Keys,
		Bus:     d.Bus,
		Version: d.Version,
		Zone:    d.Config.Cluster.Zone,
		Ops:     d.Ops,
		Local:   gatewayLocals(d),
		Cluster: d.Cluster,
	}), nil
}

// gatewayLocals exposes the co-located roles to the gateway.
func gatewayLocals(d *Deps) gateway.Locals {
	var l gateway.Locals
	if st, ok := d.Roles["storage"].(*storage.Role); ok {
		l.Storage = st.Handler
		l.StorageURL = func() string { return storageURL(d.Config.Storage, st) }
	}
	if ix, ok := d.Roles["index"].(*index.Role); ok {
		l.Index = ix.Handler
		l.IndexClient = localIndexClient(d, ix)
	}
	if ed, ok := d.Roles["edge"].(*edge.Role); ok {
		l.Edge = ed.Handler
	}
	if rg, ok := d.Roles["registry"].(*registry.Role); ok {
		l.Registry = rg.Handler
		l.RegistryClient = func() registryapi.Client { return httpapi.NewLocalClient(rg.API()) }
	}
	return l
}
