package gateway

import (
	"github.com/ronhq/ron/roles/gateway/tenant"
	"github.com/ronhq/ron/roles/gateway/tenants"
)

// tenantDefaults are the tenant_* and anon_* parameters (docs/gateway.md §9).
func (c Config) tenantDefaults() tenants.Defaults {
	return tenants.Defaults{
		Tenant: tenant.Params{RPS: c.TenantRPS, Burst: c.TenantBurst, Weight: c.TenantWt},
		Anon:   tenant.Params{RPS: c.AnonRPS, Burst: c.AnonBurst, Weight: c.AnonWeight},
	}
}

// tenantItems converts [[gateway.tenants]] to table items, members left
// out marked missing; the first invalid one is an error naming the key.
func (c Config) tenantItems() ([]tenants.Item, error) {
	items := make([]tenants.Item, 0, len(c.Tenants))
	for _, t := range c.Tenants {
		it := tenants.Item{ID: t.ID, MaxBytesPerS: t.MaxBytesPerS}
		if t.RPS != nil {
			it.RPS = *t.RPS
		} else {
			it.Missing |= tenants.FieldRPS
		}
		if t.Burst != nil {
			it.Burst = *t.Burst
		} else {
			it.Missing |= tenants.FieldBurst
		}
		if t.Weight != nil {
			it.Weight = *t.Weight
		} else {
			it.Missing |= tenants.FieldWeight
		}
		items = append(items, it)
	}
	if _, errs := tenants.Build(c.tenantDefaults(), items, nil); len(errs) > 0 {
		return nil, keyError("tenants", "%v", errs[0])
	}
	return items, nil
}
