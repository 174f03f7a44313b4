package index

import (
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
)

// Module declares the index role to the node: it uses no other role; in
// cluster mode it owns records by rendezvous over the index members
// (docs/cluster.md §6).
var Module = module.Role[Config]{
	Descriptor: module.Descriptor{Name: indexapi.RoleName, Summary: "names and b3 addresses → manifests → providers"},
	Listen:     func(c Config) string { return c.Listen },
	Advertise:  func(c Config) string { return c.AdvertiseURL },
	New: func(env *module.Env, cfg Config) (runtime.Role, error) {
		return New(Options{Config: cfg, Env: *env}), nil
	},
}

var _ indexapi.Local = (*Role)(nil)
