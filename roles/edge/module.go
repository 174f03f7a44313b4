package edge

import (
	"github.com/ronhq/ron/roles/edge/edgeapi"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexapi/clusterindex"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
)

// Module declares the edge role to the node: a co-located storage is its
// in-process /o source, a co-located index gives it providers
// (docs/edge.md §3).
var Module = module.Role[Config]{
	Descriptor: module.Descriptor{Name: edgeapi.RoleName,
		Summary: "tile packs and immutable assets with range/cache semantics",
		Uses:    []string{storageapi.RoleName, indexapi.RoleName}},
	Listen:    func(c Config) string { return c.Listen },
	Advertise: func(c Config) string { return c.AdvertiseURL },
	New: func(env *module.Env, cfg Config) (runtime.Role, error) {
		return New(Options{Config: cfg, Env: *env, Local: locals(env)}), nil
	},
}

var _ edgeapi.Local = (*Role)(nil)

// locals are the roles of env's process that the edge uses.
func locals(env *module.Env) Locals {
	var l Locals
	if st, ok := module.Peer[storageapi.Local](env, storageapi.RoleName); ok {
		l.Storage, l.StorageURL = st.Handler, st.AdvertiseURL
	}
	if ix, ok := module.Peer[indexapi.Local](env, indexapi.RoleName); ok {
		l.IndexClient = clusterindex.Local(ix, env.Cluster)
	}
	return l
}
