package root

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/internal/cli/doctor"
	"github.com/ronhq/ron/internal/node"
	"github.com/ronhq/ron/roles/edge/edgeapi"
	"github.com/ronhq/ron/roles/gateway/gatewayapi"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/roles/registry/registryapi"
	"github.com/ronhq/ron/roles/storage/storageapi"
	"github.com/ronhq/ron/runtime/config"
)

// doctorCommand is `ron doctor`: checks this node's setup and says what to
// fix. Exit 0 when nothing failed (warnings allowed), 1 otherwise.
func (a *app) doctorCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check this node: config, data dir, fsync, free space, clock, ports, root key, dependencies",
		Long: "Check this node's setup and print what to fix: the config is valid, the data dir is writable and fsync works, " +
			"there is free space, the clock agrees with a configured peer or registry, the listen ports are free or held by a running ron, " +
			"the root key is private to its owner, and the URLs the enabled roles depend on answer /healthz. " +
			"Run it as the user ron runs as (sudo -u ron ron doctor --config /etc/ron/ron.toml). Exit 0 when nothing failed, 1 otherwise.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cli.CheckOutput(output); err != nil {
				return err
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			cfg, err := a.load()
			rep := doctor.Run(ctx, doctorNode(a.configSource(), cfg, err), doctor.System{})
			if output == "json" {
				_ = cli.PrintJSON(cmd.OutOrStdout(), rep)
			} else {
				rep.WriteText(cmd.OutOrStdout())
			}
			if !rep.OK {
				return cli.Reported(cli.ExitFailure, errors.New("doctor: some checks failed"))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	config.RegisterFlags(cmd.Flags(), ptr(node.DefaultConfig()), "data_dir")
	keyFlagsHelp(cmd)
	return cmd
}

// configSource is the config file the commands read, "" for none.
func (a *app) configSource() string {
	if a.configFile != "" {
		return a.configFile
	}
	return a.getenv("RON_CONFIG")
}

// doctorNode is what the doctor checks, from the effective config (or the
// error that kept it from loading).
func doctorNode(file string, cfg *node.Config, err error) doctor.Node {
	n := doctor.Node{ConfigFile: file, ConfigErr: err}
	if err != nil {
		return n
	}
	n.Roles, n.DataDir, n.Amnesia, n.RootKeyFile = cfg.Roles, cfg.DataDir, cfg.Amnesia, cfg.Cluster.RootKeyFile
	if cfg.Enabled(storageapi.RoleName) && cfg.Storage.MinFreeBytes > 0 {
		n.MinFreeBytes = uint64(cfg.Storage.MinFreeBytes)
	}
	n.Listeners = []doctor.Listener{{Key: "admin.listen", Addr: cfg.Admin.Listen}}
	for _, l := range cfg.Listeners() {
		n.Listeners = append(n.Listeners, doctor.Listener{Key: l.Role + ".listen", Addr: l.Addr})
	}
	n.Dependencies = dependencies(cfg)
	if cfg.Enabled(registryapi.RoleName) {
		n.MaxClockSkew = cfg.Registry.ClockSkew
	}
	return n
}

// dependencies lists the URLs the enabled roles need, the registry's and
// the peers' first (the clock check compares with the first).
func dependencies(cfg *node.Config) []doctor.Dependency {
	var out []doctor.Dependency
	add := func(role, key, url string, optional bool) {
		if url != "" && cfg.Enabled(role) {
			out = append(out, doctor.Dependency{Key: role + "." + key, URL: url, Optional: optional})
		}
	}
	add(gatewayapi.RoleName, "registry_url", cfg.Gateway.RegistryURL, false)
	self := map[string]bool{strings.TrimRight(cfg.Index.AdvertiseURL, "/"): true, "http://" + cfg.Index.Listen: true}
	for _, p := range cfg.Index.Peers {
		if !self[strings.TrimRight(p, "/")] {
			add(indexapi.RoleName, "peers", p, true)
		}
	}
	add(gatewayapi.RoleName, "storage_url", cfg.Gateway.StorageURL, false)
	add(gatewayapi.RoleName, "index_url", cfg.Gateway.IndexURL, false)
	add(gatewayapi.RoleName, "edge_url", cfg.Gateway.EdgeURL, false)
	add(edgeapi.RoleName, "storage_url", cfg.Edge.StorageURL, false)
	add(edgeapi.RoleName, "index_url", cfg.Edge.IndexURL, false)
	if !cfg.Enabled(indexapi.RoleName) {
		for _, u := range cfg.Storage.IndexURLs {
			add(storageapi.RoleName, "index_urls", u, true)
		}
	}
	return out
}
