package roles

import (
	"context"
	"os"
	"runtime/debug"
	"sync"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/roles/cli"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/config"
	"github.com/ronhq/ron/runtime/sdnotify"
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
	config.RegisterFlags(cmd.Flags(), ptr(DefaultConfig()), "data_dir")
	keyFlagsHelp(cmd)
	return cmd
}

func ptr[T any](v T) *T { return &v }

// serve runs a node until its shutdown sequence ends. SIGINT/SIGTERM start
// the shutdown, a second one exits 3 at once, SIGHUP reloads. Under systemd
// ($NOTIFY_SOCKET) the node sends sd_notify messages (runtime/sdnotify).
func (a *app) serve(ctx context.Context, cfg *Config) error {
	if ctx == nil {
		ctx = context.Background()
	}
	tuneGC()
	node, err := NewNode(cfg, a.load, os.Stderr, Version)
	if err != nil {
		return cli.Exit(cli.ExitFailure, err)
	}
	sd, err := sdnotify.FromEnv(os.Getenv, os.Getpid())
	if err != nil {
		node.log.Warn().Err(err).Msg("systemd notify environment")
	}
	node.NotifySystemd(sd)
	sigCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { // signals: owned by serve, ends when the node is done
		runtime.WaitSignals(sigCtx, node.manager, runtime.SignalOptions{
			Reload: func() {
				if _, err := node.Reload(); err != nil {
					node.log.Error().Err(err).Msg("reload refused")
				}
			},
			Exit: a.exit,
		})
	})
	err = node.Run(ctx)
	cancel()
	wg.Wait()
	if err != nil {
		return cli.Exit(cli.ExitFailure, err)
	}
	return nil
}

// serveGCPercent is the GC target of `ron serve` when GOGC is unset: a
// forwarded request allocates little but often, and at Go's default of 100
// a small heap is collected every few hundred requests (the gateway's
// forwarding benchmark gains about a tenth at 200). GOGC, when set, wins.
const serveGCPercent = 200

// tuneGC applies serveGCPercent unless the operator set GOGC.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(serveGCPercent)
	}
}
