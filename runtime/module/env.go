package module

import (
	"context"
	"fmt"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/consensus"
)

// Env is the shared environment every module of a node is built from: one
// per node, nothing in it is global (tests run several nodes in one
// process). The node fills it before it builds the first module and adds
// each module it builds, so a module finds the ones built before it.
type Env struct {
	Log     zerolog.Logger
	Metrics *runtime.Metrics
	Bus     *runtime.Bus
	Keys    *auth.Keyring // the node's root keyring: mints and checks tokens
	Version string
	DataDir string // the process data dir; each role uses its own subfolder
	Amnesia bool   // nothing is written to disk
	// Ops mounts /healthz, /readyz, /metrics and /version on a listener.
	Ops func(e *echo.Echo)
	// Node is this node's identity.
	Node Identity
	// Cluster is the membership in cluster mode; nil (a nil interface)
	// when cluster mode is off.
	Cluster cluster.Membership
	// ClusterConfig is the [cluster] section the node started with;
	// LiveCluster returns the one in force (reloads included).
	ClusterConfig cluster.Config
	LiveCluster   func() cluster.Config
	// Plane is the node's handle on the control-plane group
	// (docs/cluster.md §14): a role registers its replicated state machine
	// in it while it is built and proposes writes through it. nil when the
	// node takes no part in the group (cluster mode off, or a node running
	// neither index nor registry that is not a server).
	Plane *consensus.Plane
	// Fatal stops the node because a module cannot go on safely (its
	// replicated state could no longer follow the log); the process exits
	// with err once the shutdown sequence ends.
	Fatal func(err error)

	built map[string]runtime.Role
}

// Identity is who this node is.
type Identity struct {
	// ID is the node id in cluster mode (cluster.node_id, else the stored
	// or generated ULID); "" when cluster mode is off.
	ID string
	// ResolveID returns the node id, creating <data>/node.id outside
	// cluster mode when there is none yet (called only by a module that
	// needs an id then, such as storage announcing its objects).
	ResolveID func() (string, error)
	// Zone is cluster.zone at start ("" when none).
	Zone string
	// Token yields the bearer of node-to-node calls (one scope caveat of
	// cluster.NodeScopes); nil when cluster mode is off.
	Token func(ctx context.Context) (string, error)
}

// Add records r as the built module name, for the modules built after it.
// Adding a name twice panics: it is a wiring bug.
func (e *Env) Add(name string, r runtime.Role) {
	if e.built == nil {
		e.built = map[string]runtime.Role{}
	}
	if _, dup := e.built[name]; dup {
		panic(fmt.Sprintf("module: %q added twice", name))
	}
	e.built[name] = r
}

// Peer returns the module name built before the caller in the same
// process, as T: the in-process face its contract declares (storageapi.Local,
// indexapi.Local, …). ok is false when name does not run here. A module
// that runs here but does not implement T is a wiring bug and panics.
func Peer[T any](e *Env, name string) (t T, ok bool) {
	r, found := e.built[name]
	if !found {
		return t, false
	}
	t, ok = r.(T)
	if !ok {
		panic(fmt.Sprintf("module: %q is a %T, which does not implement %T", name, r, t))
	}
	return t, true
}

// Role declares one of the five roles: its descriptor, the listen address
// of its config section C, and its constructor from the node's Env and its
// own section. A role package exports one of these as Module; the node's
// role table holds one line per role.
type Role[C any] struct {
	Descriptor
	Listen func(cfg C) string
	// Advertise is the section's advertise_url ("" when unset): the URL
	// other nodes reach the role at, gossiped in cluster mode.
	Advertise func(cfg C) string
	New       func(env *Env, cfg C) (runtime.Role, error)
}
