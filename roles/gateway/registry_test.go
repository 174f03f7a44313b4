package gateway

import (
	"net/http"
	"testing"

	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/registry/registrytest"
	"github.com/ronhq/ron/store"
)

// commitTenant commits the next version with one tenant item and returns
// its number.
func commitTenant(rr *registrytest.Live, id string, rps float64) uint64 {
	return rr.Commit(map[string]any{"kind": "tenant", "id": id, "rps": rps, "burst": 0, "weight": 1, "max_bytes_per_s": 0}).Version
}

// TestRegistryTenantsLive (docs/gateway.md §7): a committed tenant item with rps 0 turns
// that tenant's requests into 403 tenant_suspended, and the next version
// lifts it, with the registry co-located (bus events) and over HTTP
// (/registry/stream).
func TestRegistryTenantsLive(t *testing.T) {
	for _, wiring := range []struct {
		name string
		wire func(rr *registrytest.Live, cfg *Config, opt *Options)
	}{
		{"co-located", func(rr *registrytest.Live, _ *Config, opt *Options) {
			opt.Bus = rr.Bus
			opt.Local.Registry = rr.Role.Handler
			opt.Local.RegistryClient = func() registryapi.Client { return rr.Local }
		}},
		{"registry_url", func(rr *registrytest.Live, cfg *Config, _ *Options) {
			cfg.RegistryURL = "http://" + rr.Role.Addr()
		}},
	} {
		t.Run(wiring.name, func(t *testing.T) {
			rr := registrytest.Start(t)
			s := newStub(nil)
			cfg := baseConfig()
			cfg.StorageURL = s.listen(t)
			cfg.TenantRPS, cfg.TenantBurst = 1e6, 0 // polling must not empty acme's bucket
			h := startGateway(t, cfg, Locals{}, func(o *Options) { wiring.wire(rr, &o.Config, o) })
			path := "/o/" + store.Sum([]byte("x")).String()
			acme := h.bearer("acme", "storage:read")
			if a := h.do("GET", path, nil, "Authorization", acme); a.status != http.StatusOK {
				t.Fatalf("acme before any tenant item: %s", a)
			}
			v := commitTenant(rr, "acme", 0)
			var last answer
			eventually(t, "acme suspended by the registry", func() bool {
				last = h.with(t).do("GET", path, nil, "Authorization", acme)
				return last.status != http.StatusOK
			})
			env := want(t, "acme suspended", last, 403, "forbidden")
			if env.Error.Details["reason"] != "tenant_suspended" {
				t.Errorf("details %v, want reason tenant_suspended", env.Error.Details)
			}
			if got := h.metric("gateway_tenants_version"); got != float64(v) {
				t.Errorf("ron_gateway_tenants_version = %v, want %d", got, v)
			}
			if a := h.do("GET", path, nil); a.status != http.StatusOK {
				t.Errorf("anonymous read while acme is suspended: %s", a)
			}
			commitTenant(rr, "acme", 100)
			eventually(t, "acme readmitted by the registry", func() bool {
				return h.with(t).do("GET", path, nil, "Authorization", acme).status == http.StatusOK
			})
		})
	}
}
