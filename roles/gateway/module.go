package gateway

import (
	"github.com/ronhq/ron/roles/edge/edgeapi"
	"github.com/ronhq/ron/roles/gateway/gatewayapi"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/index/indexapi/clusterindex"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
)

// Module declares the gateway role to the node: each co-located role is an
// in-process upstream (docs/gateway.md §2).
var Module = module.Role[Config]{
	Descriptor: module.Descriptor{Name: gatewayapi.RoleName, Summary: "admission-controlled public front door",
		Uses: []string{storageapi.RoleName, indexapi.RoleName, edgeapi.RoleName, registryapi.RoleName}},
	Listen:    func(c Config) string { return c.Listen },
	Advertise: func(c Config) string { return c.AdvertiseURL },
	New: func(env *module.Env, cfg Config) (runtime.Role, error) {
		return New(Options{Config: cfg, Env: *env, Local: locals(env)}), nil
	},
}

// locals exposes the roles of env's process to the gateway.
func locals(env *module.Env) Locals {
	var l Locals
	if st, ok := module.Peer[storageapi.Local](env, storageapi.RoleName); ok {
		l.Storage, l.StorageURL = st.Handler, st.AdvertiseURL
	}
	if ix, ok := module.Peer[indexapi.Local](env, indexapi.RoleName); ok {
		l.Index, l.IndexClient = ix.Handler, clusterindex.Local(ix, env.Cluster)
	}
	if ed, ok := module.Peer[edgeapi.Local](env, edgeapi.RoleName); ok {
		l.Edge = ed.Handler
	}
	if rg, ok := module.Peer[registryapi.Local](env, registryapi.RoleName); ok {
		l.Registry, l.RegistryClient = rg.Handler, rg.LocalClient
	}
	return l
}
