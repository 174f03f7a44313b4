// Package tenants keeps the gateway's tenant table live (docs/gateway.md
// §3.3, §7): the per-tenant parameters from [[gateway.tenants]] and from
// the registry's committed descriptor set, registry items overriding
// config items by id, anything unlisted falling back to the tenant_* or
// anon_* defaults.
//
// A Table is an immutable snapshot; Build makes one. A Follower keeps one
// current from a registry: it reads HEAD at start, follows committed
// versions (Watch, or RegistryUpdated events on the bus when the registry
// is co-located), re-reads HEAD every minute, and hands every new Table to
// the role, which swaps it in atomically. An unreachable registry is never
// fatal: the last applied table stays in force.
package tenants

import (
	"errors"
	"fmt"

	"github.com/ronhq/ron/roles/gateway/tenant"
	"github.com/ronhq/ron/roles/registry/registryapi"
)

// ErrItem marks an invalid tenant item; every *ItemError wraps it.
var ErrItem = errors.New("invalid tenant item")

// Fields is a set of tenant item members (Item.Missing).
type Fields uint8

// The members of a tenant item that a config table may leave out.
const (
	FieldRPS Fields = 1 << iota
	FieldBurst
	FieldWeight
	FieldMaxBytesPerS
)

// Item is one tenant's limits as written in config or in a registry tenant
// item, with the docs/gateway.md §7 meanings: RPS ≥ 0 (0 = suspended), Burst ≥ 0 (0 =
// ceil(RPS)), Weight 1–1000, MaxBytesPerS ≥ 0 (0 = unlimited). Its JSON is
// the registry item's members (without "kind").
type Item struct {
	ID           string  `json:"id"`
	RPS          float64 `json:"rps"`
	Burst        int     `json:"burst"`
	Weight       int     `json:"weight"`
	MaxBytesPerS int64   `json:"max_bytes_per_s"`
	// Missing names the members the source left out; they take the
	// tenant_* defaults (Defaults.Tenant). Registry items have every
	// member, so Missing is 0 for them.
	Missing Fields `json:"-"`
}

// Params returns the item's parameters, members in Missing taken from def.
func (it Item) Params(def tenant.Params) tenant.Params {
	p := tenant.Params{RPS: it.RPS, Burst: it.Burst, Weight: it.Weight, MaxBytesPerS: it.MaxBytesPerS}
	if it.Missing&FieldRPS != 0 {
		p.RPS = def.RPS
	}
	if it.Missing&FieldBurst != 0 {
		p.Burst = def.Burst
	}
	if it.Missing&FieldWeight != 0 {
		p.Weight = def.Weight
	}
	if it.Missing&FieldMaxBytesPerS != 0 {
		p.MaxBytesPerS = def.MaxBytesPerS
	}
	return p
}

// check validates it against docs/gateway.md §7 with def filling missing members: the id
// must follow the registry id syntax and must not start with "anon:"
// (reserved for anonymous tenants), and the parameters must pass
// tenant.Params.Validate. The error wraps ErrItem.
func (it Item) check(def tenant.Params) error {
	if !tenant.ValidTokenTenant(it.ID) {
		return fmt.Errorf("%w: id %q is not a tenant id (registry id syntax, not %q)", ErrItem, clip(it.ID), tenant.AnonPrefix)
	}
	if err := it.Params(def).Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrItem, err)
	}
	return nil
}

// Sources of tenant items (ItemError.Source).
const (
	SourceConfig   = "config"
	SourceRegistry = registryapi.RoleName
)

// ItemError reports one tenant item that was skipped. Index is the item's
// position in its list: the config list, the registry list given to Build,
// or the descriptor set's items for ItemsFromSet.
type ItemError struct {
	Source string
	Index  int
	ID     string
	Err    error
}

// Error implements error.
func (e *ItemError) Error() string {
	return fmt.Sprintf("%s tenant item %d (%q): %v", e.Source, e.Index, clip(e.ID), e.Err)
}

// Unwrap returns the cause, which wraps ErrItem.
func (e *ItemError) Unwrap() error { return e.Err }

// clip bounds untrusted text copied into errors and logs.
func clip(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
