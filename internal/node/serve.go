package node

import (
	"context"
	"os"
	"runtime/debug"
	"sync"

	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/sdnotify"
)

// Version is ron's version, set at build time with -ldflags.
var Version = "0.1.0-dev"

// Serve runs a node of cfg as `ron serve` does, until its shutdown sequence
// ends: SIGINT/SIGTERM start the shutdown, a second one calls exit(3) at
// once, SIGHUP reloads from reload. Under systemd ($NOTIFY_SOCKET) the node
// sends sd_notify messages (runtime/sdnotify). Logs go to stderr. It
// returns the node's construction or Run error.
func Serve(ctx context.Context, cfg *Config, reload ConfigSource, exit func(code int)) error {
	if ctx == nil {
		ctx = context.Background()
	}
	tuneGC()
	n, err := NewNode(cfg, reload, os.Stderr, Version)
	if err != nil {
		return err
	}
	sd, err := sdnotify.FromEnv(os.Getenv, os.Getpid())
	if err != nil {
		n.log.Warn().Err(err).Msg("systemd notify environment")
	}
	n.NotifySystemd(sd)
	sigCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { // signals: owned by Serve, ends when the node is done
		runtime.WaitSignals(sigCtx, n.manager, runtime.SignalOptions{
			Reload: func() {
				if _, err := n.Reload(); err != nil {
					n.log.Error().Err(err).Msg("reload refused")
				}
			},
			Exit: exit,
		})
	})
	err = n.Run(ctx)
	cancel()
	wg.Wait()
	return err
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
