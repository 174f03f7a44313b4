package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/labstack/echo/v4"
	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/module"
	"github.com/ronhq/ron/runtime/sdnotify"
)

// Node is one running ron process: its config snapshot, logger, metrics,
// bus, keys, role manager and admin plane. Tests run several in one process.
type Node struct {
	cfg      *runtime.Snapshot[Config]
	src      ConfigSource
	log      zerolog.Logger
	metrics  *runtime.Metrics
	bus      *runtime.Bus
	keys     *auth.Keyring
	manager  *runtime.Manager
	admin    *adminPlane
	roles    map[string]runtime.Role
	started  time.Time
	version  string
	running  chan struct{}   // closed once every enabled role has started
	ran      chan struct{}   // closed when the Run that Start began has returned; nil unless Start ran it
	runErr   error           // that Run's result, set before ran is closed
	sd       *sdnotify.Agent // systemd notifications; nil: none
	cluster  *clusterNode    // cluster mode's membership; nil when off
	adminErr <-chan error    // the admin listener's end, once the admin part started
	nodeID   string          // cluster mode's node id; "" when off
	cp       *controlPlane   // the control-plane part; nil when the node takes none

	fatalMu  sync.Mutex
	fatalErr error // the first Fatal's error: Run returns it
}

// Running is closed once the admin plane and every enabled role have started.
func (n *Node) Running() <-chan struct{} { return n.running }

// Membership is the node's cluster membership; nil when cluster mode is
// off.
func (n *Node) Membership() cluster.Membership { return n.cluster.membership() }

// Addr is the bound listener address of role, "" when this node does not
// run it.
func (n *Node) Addr(role string) string {
	if a, ok := n.roles[role].(runtime.Addresser); ok {
		return a.Addr()
	}
	return ""
}

// Config is the config in force (the last reload's).
func (n *Node) Config() *Config { return n.cfg.Load() }

// Keys is the node's keyring: it mints and checks capability tokens.
func (n *Node) Keys() *auth.Keyring { return n.keys }

// AdminAddr is the admin listener's bound address.
func (n *Node) AdminAddr() string { return n.admin.addr() }

// NotifySystemd makes Run tell systemd (sd_notify) when the node is ready,
// reloading, stopping and alive, as env says (sdnotify.FromEnv). Call it
// before Run; an env without a socket changes nothing.
func (n *Node) NotifySystemd(env sdnotify.Env) {
	n.sd = sdnotify.New(sdnotify.Options{Sender: env.Sender, Watchdog: env.Watchdog, Ready: n.readiness,
		Bus: n.bus, Log: n.log, Metrics: n.metrics})
}

// ConfigSource reloads the config from the same sources as at start.
type ConfigSource func() (*Config, error)

// NewNode builds a node from a loaded config: it creates the root key and the
// data dir (unless amnesia), builds the cluster membership in cluster mode
// and constructs the enabled roles, starting nothing.
func NewNode(cfg *Config, reload ConfigSource, logOut *os.File, version string) (*Node, error) {
	log, err := newLogger(cfg.Log.Level, logOut)
	if err != nil {
		return nil, err
	}
	if !cfg.Amnesia {
		if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
	}
	keys, inMemory, err := loadRootKey(cfg)
	if err != nil {
		return nil, fmt.Errorf("root key: %w", err)
	}
	if inMemory {
		log.Warn().Str("file", cfg.Cluster.RootKeyFile).Msg("cluster.root_key_file is missing: amnesia keeps a key in memory that no other node shares")
	}
	m := runtime.NewMetrics(metrics.NewSet())
	n := &Node{cfg: runtime.NewSnapshot(cfg), src: reload, log: log, metrics: m, bus: runtime.NewBus(m),
		keys: keys, roles: map[string]runtime.Role{}, started: time.Now(), version: version, running: make(chan struct{})}
	n.manager = runtime.NewManager(runtime.ManagerOptions{Log: log, Metrics: m, Bus: n.bus, DrainDeadline: cfg.DrainDeadline})
	if err := n.buildCluster(cfg); err != nil {
		return nil, err
	}
	n.buildControlPlane(cfg)
	if err := n.buildModules(cfg); err != nil {
		return nil, err
	}
	n.admin = newAdminPlane(n)
	return n, nil
}

// buildCluster resolves the node id and builds the membership in cluster
// mode.
func (n *Node) buildCluster(cfg *Config) error {
	if !cfg.Cluster.Enabled {
		return nil
	}
	id, err := resolveNodeID(cfg)
	if err != nil {
		return err
	}
	cn, err := newClusterNode(cfg, id, n.keys, n.log, n.metrics)
	if err != nil {
		return err
	}
	n.cluster, n.nodeID = cn, id
	return nil
}

// buildModules builds the node's modules in the order of its module graph
// (nodeModules): the enabled roles, each from the node's shared environment
// and its own config section, and the node's own parts.
func (n *Node) buildModules(cfg *Config) error {
	g, err := module.Order(nodeModules(cfg))
	if err != nil {
		return err
	}
	n.log.Debug().Strs("graph", strings.Split(strings.TrimRight(g.String(), "\n"), "\n")).Msg("module graph")
	env := n.moduleEnv(cfg)
	for _, d := range g.Modules() {
		if p := n.part(d.Name); p != nil {
			n.manager.AddPart(p, p.bound+partStopSlack)
			continue
		}
		e, _ := lookup(d.Name)
		r, err := e.New(env, cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		env.Add(e.Name, r)
		n.roles[e.Name] = r
		n.manager.Add(r, e.Listen(cfg))
	}
	return nil
}

// moduleEnv is the environment the node's modules are built from.
func (n *Node) moduleEnv(cfg *Config) *module.Env {
	env := &module.Env{Log: n.log, Metrics: n.metrics, Bus: n.bus, Keys: n.keys, Version: n.version,
		DataDir: cfg.DataDir, Amnesia: cfg.Amnesia, Ops: func(e *echo.Echo) { mountOps(e, n) },
		Node: module.Identity{ID: n.nodeID, Zone: cfg.Cluster.Zone,
			ResolveID: func() (string, error) { return resolveNodeID(cfg) }},
		Cluster: n.cluster.membership(), ClusterConfig: cfg.Cluster,
		LiveCluster: func() cluster.Config { return n.cfg.Load().Cluster }, Plane: n.plane(), Fatal: n.fatal}
	if n.cluster != nil {
		env.Node.Token = nodeTokenSource(cfg, n.keys)
	}
	return env
}

// Run starts the node's modules in the order of its module graph (systemd
// notifications, the admin plane, the membership in cluster mode, the roles,
// the membership's run, readiness), serves until ctx ends or a shutdown is
// requested, then runs the shutdown sequence: the roles drain, and every
// module stops in reverse, so the roles stop, the node leaves the cluster,
// and the admin plane stops last.
func (n *Node) Run(ctx context.Context) error {
	if err := n.manager.Start(ctx); err != nil {
		return err
	}
	close(n.running)
	n.log.Info().Strs("roles", n.cfg.Load().Roles).Str("admin", n.admin.addr()).Bool("amnesia", n.cfg.Load().Amnesia).Msg("ron is running")
	err := n.manager.Run(ctx)
	n.fatalMu.Lock()
	defer n.fatalMu.Unlock()
	if n.fatalErr != nil {
		return n.fatalErr
	}
	return err
}

// fatal is Env.Fatal: it logs err, keeps the first one for Run to return
// and starts the shutdown sequence.
func (n *Node) fatal(err error) {
	n.log.Error().Err(err).Msg("fatal: the node stops")
	n.fatalMu.Lock()
	if n.fatalErr == nil {
		n.fatalErr = err
	}
	n.fatalMu.Unlock()
	n.manager.RequestShutdown("fatal: " + err.Error())
}

// Start builds a node from cfg (see NewNode) and runs it in the background
// until its shutdown sequence ends: it returns once every module has
// started, or Run's error if the node failed to start. This is how a
// program embeds ron (tests run several nodes in one process): call
// Shutdown to stop it and Wait for Run's result.
func Start(cfg *Config, reload ConfigSource, logOut *os.File, version string) (*Node, error) {
	n, err := NewNode(cfg, reload, logOut, version)
	if err != nil {
		return nil, err
	}
	n.ran = make(chan struct{})
	go func() { // node-run: owned by n, awaited by Wait
		defer close(n.ran)
		n.runErr = n.Run(context.Background())
	}()
	select {
	case <-n.Running():
		return n, nil
	case <-n.ran:
		return nil, n.runErr
	}
}

// Wait blocks until the Run that Start began has returned, and returns
// its error; on a node built by Start, any number of times.
func (n *Node) Wait() error {
	<-n.ran
	return n.runErr
}

// EphemeralConfig is the config of an embedded node: the defaults with
// amnesia on (nothing is written to disk), data (the node id, cluster keys)
// under dataDir, logs at error level, and every listener on a free
// loopback port.
func EphemeralConfig(dataDir string) Config {
	cfg := DefaultConfig()
	cfg.Amnesia = true
	cfg.DataDir = dataDir
	cfg.Log.Level = "error"
	cfg.Admin.Listen = "127.0.0.1:0"
	cfg.Storage.Listen = "127.0.0.1:0"
	cfg.Index.Listen = "127.0.0.1:0"
	cfg.Registry.Listen = "127.0.0.1:0"
	cfg.Edge.Listen = "127.0.0.1:0"
	cfg.Gateway.Listen = "127.0.0.1:0"
	return cfg
}

// Shutdown asks the node to run its shutdown sequence.
func (n *Node) Shutdown(reason string) { n.manager.RequestShutdown(reason) }

// Reload re-reads the config from its sources and applies what can change
// live; keys that need a restart are rejected by name and nothing changes.
func (n *Node) Reload() (version uint64, err error) {
	n.sd.Reloading()
	defer func() { n.sd.Reloaded(version, err) }()
	next, err := n.src()
	if err != nil {
		return 0, err
	}
	cur := n.cfg.Load()
	keys := restartOnly(cur, next)
	keys = append(keys, clusterRestartOnly(cur.Cluster, next.Cluster)...)
	if len(keys) > 0 {
		return 0, fmt.Errorf("these keys need a restart: %s", strings.Join(keys, ", "))
	}
	if err := n.applyRoles(next); err != nil {
		return 0, err
	}
	v := n.cfg.Store(next)
	n.bus.Publish(runtime.ConfigUpdated{Version: v})
	n.log.Info().Uint64("version", v).Msg("config reloaded")
	return v, nil
}

// applyRoles checks every role's part of next first, then applies the
// [cluster] changes and each role's part in start order, so a reload
// rejected by one role changes none.
func (n *Node) applyRoles(next *Config) error {
	cur := n.cfg.Load()
	for _, e := range enabledEntries(cur) {
		if c, ok := n.roles[e.Name].(runtime.ApplyChecker); ok {
			if err := c.CheckApply(e.Section(next)); err != nil {
				return fmt.Errorf("%s: %w", e.Name, err)
			}
		}
	}
	if err := n.applyCluster(cur, next); err != nil {
		return err
	}
	for _, e := range enabledEntries(cur) {
		a, ok := n.roles[e.Name].(runtime.Applier)
		if !ok {
			continue
		}
		if err := a.Apply(e.Section(next)); err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
	}
	n.admin.server.SetLimits(next.Admin.Ingress.Limits())
	return nil
}

// restartOnly lists top-level keys whose change needs a restart.
func restartOnly(cur, next *Config) []string {
	var keys []string
	if strings.Join(cur.Roles, ",") != strings.Join(next.Roles, ",") {
		keys = append(keys, "roles")
	}
	if filepath.Clean(cur.DataDir) != filepath.Clean(next.DataDir) {
		keys = append(keys, "data_dir")
	}
	if cur.Amnesia != next.Amnesia {
		keys = append(keys, "amnesia")
	}
	if cur.DrainDeadline != next.DrainDeadline {
		keys = append(keys, "drain_deadline")
	}
	if cur.Log.Level != next.Log.Level {
		keys = append(keys, "log.level")
	}
	if cur.Admin.Listen != next.Admin.Listen {
		keys = append(keys, "admin.listen")
	}
	return keys
}

func parseLevel(s string) (zerolog.Level, error) {
	switch s {
	case "debug", "info", "warn", "error":
		return zerolog.ParseLevel(s)
	}
	return zerolog.NoLevel, fmt.Errorf("log.level: %q is not debug, info, warn or error", s)
}

// newLogger writes JSON to out, or the console format when out is a TTY.
func newLogger(level string, out *os.File) (zerolog.Logger, error) {
	lvl, err := parseLevel(level)
	if err != nil {
		return zerolog.Nop(), err
	}
	var w = zerolog.New(out)
	if isatty.IsTerminal(out.Fd()) {
		w = zerolog.New(zerolog.ConsoleWriter{Out: out, TimeFormat: time.TimeOnly})
	}
	return w.Level(lvl).With().Timestamp().Logger(), nil
}
