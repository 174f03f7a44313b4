package storage

import (
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/storage/indexsink"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
	"github.com/ronhq/ron/runtime/topology"
)

// Module declares the storage role to the node. It announces its objects
// (docs/storage.md §5) to the index role of this process when there is
// one, else to storage.index_urls, else (cluster mode) to an alive index
// member; else announcing is off and status says why.
var Module = module.Role[Config]{
	Descriptor: module.Descriptor{Name: storageapi.RoleName, Summary: "BLAKE3 content-addressed object store",
		Uses: []string{indexapi.RoleName}},
	Listen:    func(c Config) string { return c.Listen },
	Advertise: func(c Config) string { return c.AdvertiseURL },
	New:       newModule,
}

var _ storageapi.Local = (*Role)(nil)

func newModule(env *module.Env, cfg Config) (runtime.Role, error) {
	opt := Options{Config: cfg, Env: *env}
	var role *Role
	sink, off, err := announceSink(env, cfg, func() string { return role.AdvertiseURL() })
	if err != nil {
		return nil, err
	}
	if sink != nil {
		opt.Sink = sink
	} else {
		opt.AnnounceOff = off
	}
	role = New(opt)
	return role, nil
}

// announceSink builds the role's Sink, or says why there is none. Its node
// is the node id (cluster.node_id, else <data>/node.id) and its region the
// live cluster.zone. index_token, when set, is applied by the role through
// Retarget (also on reload); the minted token is the fallback: the node
// token in cluster mode (it carries index:write), else an index:write one.
func announceSink(env *module.Env, cfg Config, addr func() string) (*indexsink.Sink, string, error) {
	local, colocated := module.Peer[indexapi.Local](env, indexapi.RoleName)
	if topology.Find(colocated, env.Cluster, cfg.IndexURLs...) == topology.Nowhere {
		return nil, "no index: the index role is not enabled and storage.index_urls is empty", nil
	}
	node := env.Node.ID
	if node == "" {
		var err error
		if node, err = env.Node.ResolveID(); err != nil {
			return nil, "", err
		}
	}
	opt := indexsink.Options{URLs: cfg.IndexURLs, Node: node, Addr: addr, Metrics: env.Metrics,
		Token: indexsink.MintToken(env.Keys), Cluster: env.Cluster,
		Region: func() string { return env.LiveCluster().Zone }}
	if env.Node.Token != nil {
		opt.Token = env.Node.Token
	}
	if colocated {
		opt.Local = local.LocalClient()
	}
	s, err := indexsink.New(opt)
	return s, "", err
}
