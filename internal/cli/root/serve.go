package root

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/internal/node"
	"github.com/ronhq/ron/runtime/config"
)

func (a *app) serveCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon: the enabled roles plus the admin plane",
		Long:  "Run the daemon: all built roles by default (--roles=storage,… for a subset), data under ./ron-data (--amnesia keeps everything in RAM).",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.load()
			if err != nil {
				return cli.Exit(cli.ExitFailure, err)
			}
			return a.serve(cmd.Context(), cfg)
		},
	}
	config.RegisterFlags(cmd.Flags(), ptr(node.DefaultConfig()), "data_dir")
	keyFlagsHelp(cmd)
	return cmd
}

func ptr[T any](v T) *T { return &v }

// serve runs a node until its shutdown sequence ends (node.Serve); a
// failure exits 1.
func (a *app) serve(ctx context.Context, cfg *node.Config) error {
	if err := node.Serve(ctx, cfg, a.load, a.exit); err != nil {
		return cli.Exit(cli.ExitFailure, err)
	}
	return nil
}
