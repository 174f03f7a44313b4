package tenants

import (
	"fmt"
	"slices"

	"github.com/ronhq/ron/roles/gateway/tenant"
)

// Defaults are the parameters of tenants no item lists: Tenant for token
// tenants (tenant_rps, tenant_burst, tenant_weight; MaxBytesPerS 0) and Anon
// for every anonymous prefix (anon_rps, anon_burst, anon_weight;
// MaxBytesPerS 0). Tenant also fills the members a config item leaves out.
type Defaults struct {
	Tenant, Anon tenant.Params
}

// Table is an immutable snapshot of the tenant parameters in force. Its
// methods are safe for concurrent use.
type Table struct {
	d        Defaults
	byID     map[tenant.ID]tenant.Params
	listed   []string
	version  uint64
	registry bool // a registry version was applied
}

// Build returns the table of config items overridden, id by id, by
// registry items (docs/gateway.md §7). Invalid items are skipped, each with
// an *ItemError in the returned list (Source "config" or "registry"); so is
// a repeated id within one source (the first stays). A skipped registry
// item leaves a config item of the same id in force. The table's Version
// is 0 (config only); a Follower sets it.
func Build(d Defaults, config []Item, registry []Item) (*Table, []error) {
	t := &Table{d: d, byID: make(map[tenant.ID]tenant.Params, len(config)+len(registry))}
	var errs []error
	errs = t.add(SourceConfig, config, errs)
	errs = t.add(SourceRegistry, registry, errs)
	return t, errs
}

// add validates and inserts the items of one source.
func (t *Table) add(source string, items []Item, errs []error) []error {
	seen := make(map[string]int, len(items))
	for i, it := range items {
		err := it.check(t.d.Tenant)
		if first, dup := seen[it.ID]; err == nil && dup {
			err = fmt.Errorf("%w: id repeats item %d", ErrItem, first)
		}
		if err != nil {
			errs = append(errs, &ItemError{Source: source, Index: i, ID: it.ID, Err: err})
			continue
		}
		seen[it.ID] = i
		id := tenant.ID(it.ID)
		if _, ok := t.byID[id]; !ok {
			t.listed = append(t.listed, it.ID)
		}
		t.byID[id] = it.Params(t.d.Tenant)
	}
	return errs
}

// Params returns the parameters of id: a listed tenant's item (members it
// leaves out from Defaults.Tenant); Defaults.Anon for anonymous tenants
// ("anon:…", which no item may list); Defaults.Tenant for "default" and
// every other unlisted tenant. It has the shape of tenant.ParamsFunc.
func (t *Table) Params(id tenant.ID) tenant.Params {
	if id.Anonymous() {
		return t.d.Anon
	}
	if p, ok := t.byID[id]; ok {
		return p
	}
	return t.d.Tenant
}

// Listed returns the listed tenant ids, config items first in config
// order, then the registry's new ids in registry order (a registry item
// overriding a config item keeps the config position). The caller may
// modify the returned slice.
func (t *Table) Listed() []string { return slices.Clone(t.listed) }

// Version returns the registry version the table was built from; 0 for a
// config-only table (and for genesis: see FromRegistry).
func (t *Table) Version() uint64 { return t.version }

// FromRegistry reports whether a registry version went into the table.
func (t *Table) FromRegistry() bool { return t.registry }

// Defaults returns the defaults the table was built with.
func (t *Table) Defaults() Defaults { return t.d }
