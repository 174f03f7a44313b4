// Command stubupstream stands in for a storage node behind the gateway in
// scripts/bench/gateway.sh (docs/gateway.md §12, fairness and overload): it
// answers GET and HEAD /o/{id} for any id with a fixed-size body after a
// fixed delay, so that the gateway's capacity is set by its scheduler slots
// and this delay rather than by a real store.
//
//	stubupstream -listen 127.0.0.1:15303 -size 1024 -delay 20ms
//
// GET /healthz and /readyz answer 200 at once. A request whose client gives
// up during the delay is dropped. It serves until SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ronhq/ron/scripts/bench/cmd/internal/serve"
)

// Bounds of the flags.
const (
	maxSize  = 64 << 20
	maxDelay = time.Minute
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "stubupstream:", err)
		os.Exit(1)
	}
}

// options are the parsed flags.
type options struct {
	listen string
	size   int
	delay  time.Duration
}

// parseArgs parses and validates the command line.
func parseArgs(args []string) (options, error) {
	fs := flag.NewFlagSet("stubupstream", flag.ContinueOnError)
	var o options
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "address to listen on (host:port)")
	fs.IntVar(&o.size, "size", 1024, fmt.Sprintf("body size in bytes of every object (0–%d)", maxSize))
	fs.DurationVar(&o.delay, "delay", 20*time.Millisecond, fmt.Sprintf("delay before each object answer (0–%s)", maxDelay))
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	switch {
	case fs.NArg() > 0:
		return options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.size < 0 || o.size > maxSize:
		return options{}, fmt.Errorf("size %d out of range 0–%d", o.size, maxSize)
	case o.delay < 0 || o.delay > maxDelay:
		return options{}, fmt.Errorf("delay %s out of range 0–%s", o.delay, maxDelay)
	}
	return o, nil
}

// run parses args and serves until a signal arrives.
func run(args []string, out io.Writer) error {
	o, err := parseArgs(args)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve.Run(ctx, o.listen, Handler(o.size, o.delay), out)
}
