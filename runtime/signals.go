package runtime

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// ExitSecondSignal is the exit code when a second SIGINT/SIGTERM arrives
// during the drain.
const ExitSecondSignal = 3

// SignalOptions configures WaitSignals.
type SignalOptions struct {
	// Signals delivers the signals; nil subscribes to SIGINT, SIGTERM and
	// SIGHUP with signal.Notify (undone when WaitSignals returns). Tests
	// inject their own channel.
	Signals <-chan os.Signal
	// Reload is called on SIGHUP, on WaitSignals' goroutine; nil ignores it.
	Reload func()
	// Exit is called with ExitSecondSignal on a second SIGINT/SIGTERM.
	// main passes os.Exit (the only os.Exit in ron); nil only logs.
	Exit func(code int)
}

// WaitSignals handles process signals until ctx ends or m's shutdown is
// done: the first SIGINT/SIGTERM calls m.RequestShutdown; a second one
// calls opt.Exit(3) at once and returns; SIGHUP calls opt.Reload. Run it
// on its own goroutine, owned by the serve command.
func WaitSignals(ctx context.Context, m *Manager, opt SignalOptions) {
	sigs := opt.Signals
	if sigs == nil {
		c := make(chan os.Signal, 4)
		signal.Notify(c, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		defer signal.Stop(c)
		sigs = c
	}
	stopping := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.ShutdownDone():
			return
		case s := <-sigs:
			if s == syscall.SIGHUP {
				m.log.Info().Msg("SIGHUP: reloading")
				if opt.Reload != nil {
					opt.Reload()
				}
				continue
			}
			if stopping {
				m.log.Warn().Str("signal", s.String()).Msg("second signal during drain: exiting now")
				if opt.Exit != nil {
					opt.Exit(ExitSecondSignal)
				}
				return
			}
			stopping = true
			m.log.Info().Str("signal", s.String()).Msg("signal: shutting down")
			m.RequestShutdown("signal " + s.String())
		}
	}
}
