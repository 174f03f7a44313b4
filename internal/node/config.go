// Package node is ron's composition root: the role table, the root Config,
// the admin plane and the process-level commands (serve, status, roles,
// config, version, token) that main.go mounts.
package node

import (
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/edge"
	"github.com/ronhq/ron/roles/edge/edgeapi"
	"github.com/ronhq/ron/roles/gateway"
	"github.com/ronhq/ron/roles/gateway/gatewayapi"
	"github.com/ronhq/ron/roles/index"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/registry"
	"github.com/ronhq/ron/roles/storage"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime/cluster"
	"github.com/ronhq/ron/runtime/config"
)

// MaxDrainDeadline caps drain_deadline (docs/architecture.md §3).
const MaxDrainDeadline = 5 * time.Second

// Config is the root of ron's configuration (docs/architecture.md §4).
type Config struct {
	Roles         []string        `koanf:"roles" help:"roles to run (registry, index, storage, edge, gateway)"`
	DataDir       string          `koanf:"data_dir" help:"data directory, one subfolder per role"`
	Amnesia       bool            `koanf:"amnesia" help:"keep every role RAM-only: nothing is written to disk"`
	DrainDeadline time.Duration   `koanf:"drain_deadline" help:"how long in-flight work may drain at shutdown (max 5s)"`
	Log           LogConfig       `koanf:"log"`
	Admin         AdminConfig     `koanf:"admin"`
	Registry      registry.Config `koanf:"registry"`
	Index         index.Config    `koanf:"index"`
	Storage       storage.Config  `koanf:"storage"`
	Edge          edge.Config     `koanf:"edge"`
	Gateway       gateway.Config  `koanf:"gateway"`
	Cluster       cluster.Config  `koanf:"cluster"`
}

// LogConfig is the [log] section.
type LogConfig struct {
	Level string `koanf:"level" help:"debug, info, warn or error"`
}

// AdminConfig is the [admin] section: the always-on admin plane.
type AdminConfig struct {
	Listen        string `koanf:"listen" help:"admin listener (healthz, readyz, metrics, status, reload, shutdown, tokens)"`
	httpx.Ingress `koanf:",squash"`
}

// DefaultConfig returns the built-in defaults: every built role, data under
// ./ron-data.
func DefaultConfig() Config {
	return Config{
		Roles:         AllRoleNames(),
		DataDir:       "./ron-data",
		DrainDeadline: 3 * time.Second,
		Log:           LogConfig{Level: "info"},
		Admin:         AdminConfig{Listen: "127.0.0.1:8080", Ingress: httpx.DefaultIngress()},
		Registry:      registry.DefaultConfig(),
		Index:         index.DefaultConfig(),
		Storage:       storage.DefaultConfig(),
		Edge:          edge.DefaultConfig(),
		Gateway:       gateway.DefaultConfig(),
		Cluster:       cluster.DefaultConfig(),
	}
}

// LoadConfig applies the sources over the defaults and validates the result.
func LoadConfig(src config.Sources) (*Config, error) {
	cfg := DefaultConfig()
	if err := config.Load(&cfg, src); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// Validate checks the whole config.
func (c *Config) Validate() error {
	if c.DrainDeadline <= 0 || c.DrainDeadline > MaxDrainDeadline {
		return fmt.Errorf("drain_deadline: %s is outside (0, %s]", c.DrainDeadline, MaxDrainDeadline)
	}
	if err := validateRoles(c.Roles); err != nil {
		return err
	}
	if _, err := Graph(c); err != nil {
		return fmt.Errorf("roles: %w", err)
	}
	if _, err := parseLevel(c.Log.Level); err != nil {
		return err
	}
	if err := validateListen("admin.listen", c.Admin.Listen); err != nil {
		return err
	}
	for _, l := range []struct{ key, addr string }{
		{"registry.listen", c.Registry.Listen}, {"index.listen", c.Index.Listen}, {"storage.listen", c.Storage.Listen},
		{"edge.listen", c.Edge.Listen}, {"gateway.listen", c.Gateway.Listen},
	} {
		if err := validateListen(l.key, l.addr); err != nil {
			return err
		}
	}
	if err := c.Registry.Validate(); err != nil {
		return err
	}
	if err := c.Index.Validate(); err != nil {
		return err
	}
	if err := c.Storage.Validate(); err != nil {
		return err
	}
	if c.Enabled(edgeapi.RoleName) {
		if err := c.Edge.Validate(); err != nil {
			return err
		}
		if err := c.Edge.CheckSources(c.Enabled); err != nil {
			return err
		}
	}
	if c.Enabled(gatewayapi.RoleName) {
		if err := c.Gateway.Validate(); err != nil {
			return err
		}
		// In a cluster, upstreams that are neither co-located nor configured
		// come from the membership table (docs/gateway.md §2).
		check := c.Gateway.CheckUpstreams
		if c.Cluster.Enabled {
			check = c.Gateway.CheckClusterUpstreams
		}
		if err := check(c.Enabled); err != nil {
			return err
		}
	}
	if err := c.validateAdvertise(); err != nil {
		return err
	}
	return c.validateCluster()
}

// validateAdvertise applies docs/architecture.md §7: a role whose URL others need
// (storage when it announces, the index when it has peers to recognise
// itself among) must not listen on an unspecified host without an
// advertise_url.
func (c *Config) validateAdvertise() error {
	announces := c.Enabled(indexapi.RoleName) || len(c.Storage.IndexURLs) > 0
	if c.Enabled(storageapi.RoleName) && announces && c.Storage.AdvertiseURL == "" && unspecifiedHost(c.Storage.Listen) {
		return fmt.Errorf("storage.advertise_url: needed to announce when storage.listen %q has no specific host", c.Storage.Listen)
	}
	if c.Enabled(indexapi.RoleName) && len(c.Index.Peers) > 0 && c.Index.AdvertiseURL == "" && unspecifiedHost(c.Index.Listen) {
		return fmt.Errorf("index.advertise_url: needed with index.peers when index.listen %q has no specific host", c.Index.Listen)
	}
	return nil
}

// unspecifiedHost reports whether addr's host is empty, 0.0.0.0 or ::.
func unspecifiedHost(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "" || (ip != nil && ip.IsUnspecified())
}

func validateRoles(names []string) error {
	if len(names) == 0 {
		return fmt.Errorf("roles: at least one role is needed")
	}
	for i, n := range names {
		if _, ok := lookup(n); !ok {
			return fmt.Errorf("roles: unknown role %q (known: %v)", n, AllRoleNames())
		}
		if slices.Contains(names[:i], n) {
			return fmt.Errorf("roles: %q listed twice", n)
		}
	}
	return nil
}

func validateListen(key, addr string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("%s: %q is not host:port", key, addr)
	}
	return nil
}

// Enabled reports whether the role is enabled.
func (c *Config) Enabled(role string) bool { return slices.Contains(c.Roles, role) }

// EffectiveEngine is the storage engine after amnesia is applied.
func (c *Config) EffectiveEngine() string {
	if c.Amnesia {
		return "memory"
	}
	return c.Storage.Engine
}
