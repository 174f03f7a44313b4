package node

import (
	"github.com/ronhq/ron/roles/edge"
	"github.com/ronhq/ron/roles/gateway"
	"github.com/ronhq/ron/roles/index"
	"github.com/ronhq/ron/roles/registry"
	"github.com/ronhq/ron/roles/storage"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
)

// Entry is one row of the role table: a role's module bound to its section
// of the root Config.
type Entry struct {
	module.Descriptor
	Listen    func(c *Config) string
	Advertise func(c *Config) string // advertise_url, "" when unset
	Section   func(c *Config) any    // the value the role's Apply receives
	New       func(env *module.Env, c *Config) (runtime.Role, error)
}

// role binds m to the section of the root Config that section returns.
func role[C any](m module.Role[C], section func(c *Config) C) Entry {
	return Entry{
		Descriptor: m.Descriptor,
		Listen:     func(c *Config) string { return m.Listen(section(c)) },
		Advertise:  func(c *Config) string { return m.Advertise(section(c)) },
		Section:    func(c *Config) any { return section(c) },
		New:        func(env *module.Env, c *Config) (runtime.Role, error) { return m.New(env, section(c)) },
	}
}

// table lists the five roles, one line each. They start in the order of
// their module graph (docs/architecture.md §3: each after the roles it uses,
// otherwise in this order: registry, index, storage, edge, gateway) and
// stop in reverse. Adding a role is its package, its Config section and one
// line here.
var table = []Entry{
	role(registry.Module, func(c *Config) registry.Config { return c.Registry }),
	role(index.Module, func(c *Config) index.Config { return c.Index }),
	role(storage.Module, func(c *Config) storage.Config { return c.Storage }),
	role(edge.Module, func(c *Config) edge.Config { return c.Edge }),
	role(gateway.Module, func(c *Config) gateway.Config { return c.Gateway }),
}

func lookup(name string) (Entry, bool) {
	for _, e := range table {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// AllRoleNames lists the five role names in start order.
func AllRoleNames() []string {
	out := make([]string, len(table))
	for i, e := range table {
		out[i] = e.Name
	}
	return out
}

// enabledEntries returns the enabled roles' entries in start order: the
// module graph's (Graph) for a config that validated, which orders; else
// the table's.
func enabledEntries(c *Config) []Entry {
	names := AllRoleNames()
	if g, err := Graph(c); err == nil {
		names = g.Names()
	}
	var out []Entry
	for _, name := range names {
		if e, ok := lookup(name); ok && c.Enabled(name) {
			out = append(out, e)
		}
	}
	return out
}

// RoleListen is an enabled role and its configured listen address.
type RoleListen struct{ Role, Addr string }

// Listeners lists the enabled roles with their configured listen
// addresses, in start order.
func (c *Config) Listeners() []RoleListen {
	var out []RoleListen
	for _, e := range enabledEntries(c) {
		out = append(out, RoleListen{Role: e.Name, Addr: e.Listen(c)})
	}
	return out
}

// RoleInfo describes one of the five roles for `ron roles`.
type RoleInfo struct{ Name, Summary string }

// Roles describes the five roles in table order.
func Roles() []RoleInfo {
	out := make([]RoleInfo, len(table))
	for i, e := range table {
		out[i] = RoleInfo{Name: e.Name, Summary: e.Summary}
	}
	return out
}

// Graph is the module graph of a node of c (its parts and enabled roles),
// in start order, as `ron roles --graph` and the start-up log (level
// debug) print it.
func Graph(c *Config) (module.Graph, error) { return module.Order(nodeModules(c)) }
