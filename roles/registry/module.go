package registry

import (
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
)

// Module declares the registry role to the node: it uses no other role.
var Module = module.Role[Config]{
	Descriptor: module.Descriptor{Name: registryapi.RoleName,
		Summary: "append-only, quorum-signed log of control-plane descriptors"},
	Listen:    func(c Config) string { return c.Listen },
	Advertise: func(c Config) string { return c.AdvertiseURL },
	New: func(env *module.Env, cfg Config) (runtime.Role, error) {
		return New(Options{Config: cfg, Env: *env}), nil
	},
}

var _ registryapi.Local = (*Role)(nil)
