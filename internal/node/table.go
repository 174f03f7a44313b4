package node

import (
	"context"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
)

// Deps is what the composition root hands every role constructor. Nothing in
// it is global: tests build several of these in one process.
type Deps struct {
	Config  *Config
	Log     zerolog.Logger
	Metrics *runtime.Metrics
	Bus     *runtime.Bus
	Keys    *auth.Keyring
	Version string
	Ops     func(e *echo.Echo) // mounts /healthz /readyz /metrics /version
	// Roles holds the roles built so far, in table order: a role may use one
	// that starts before it in the same process (storage announces to the
	// local index).
	Roles map[string]runtime.Role
	// Cluster is the membership in cluster mode; nil (a nil interface) when
	// cluster mode is off.
	Cluster cluster.Membership
	// NodeID is this node's id in cluster mode (cluster.node_id, else the
	// stored or generated ULID); "" when cluster mode is off.
	NodeID string
	// NodeToken yields the bearer of node-to-node calls (one scope caveat
	// of cluster.NodeScopes); nil when cluster mode is off.
	NodeToken func(ctx context.Context) (string, error)

	// current returns the live config snapshot (reloads included); nil in
	// Deps built outside a Node, where Config is all there is.
	current func() *Config
}

// live returns the current config: the node's snapshot, else Config.
func (d *Deps) live() *Config {
	if d.current != nil {
		return d.current()
	}
	return d.Config
}

// Entry is one row of the static role table.
type Entry struct {
	Name    string
	Listen  func(c *Config) string
	New     func(d *Deps) (runtime.Role, error) // nil: the role's issue has not landed
	Summary string
}

// table lists all five roles in start order (docs/architecture.md §3): registry,
// index, storage, edge, gateway. They stop in reverse.
var table = []Entry{
	{Name: "registry", Summary: "append-only, quorum-signed log of control-plane descriptors",
		Listen: func(c *Config) string { return c.Registry.Listen }, New: newRegistry},
	{Name: "index", Summary: "names and b3 addresses → manifests → providers",
		Listen: func(c *Config) string { return c.Index.Listen }, New: newIndex},
	{Name: "storage", Summary: "BLAKE3 content-addressed object store",
		Listen: func(c *Config) string { return c.Storage.Listen }, New: newStorage},
	{Name: "edge", Summary: "tile packs and immutable assets with range/cache semantics",
		Listen: func(c *Config) string { return c.Edge.Listen }, New: newEdge},
	{Name: "gateway", Summary: "admission-controlled public front door",
		Listen: func(c *Config) string { return c.Gateway.Listen }, New: newGateway},
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

// BuiltRoleNames lists the roles this binary can run, in start order.
func BuiltRoleNames() []string {
	var out []string
	for _, e := range table {
		if e.New != nil {
			out = append(out, e.Name)
		}
	}
	return out
}

// enabledEntries returns the enabled roles' entries in table order.
func enabledEntries(c *Config) []Entry {
	var out []Entry
	for _, e := range table {
		if c.Enabled(e.Name) {
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
type RoleInfo struct {
	Name, Summary string
	Built         bool // this binary can run it
}

// Roles describes the five roles in start order.
func Roles() []RoleInfo {
	out := make([]RoleInfo, len(table))
	for i, e := range table {
		out[i] = RoleInfo{Name: e.Name, Summary: e.Summary, Built: e.New != nil}
	}
	return out
}
