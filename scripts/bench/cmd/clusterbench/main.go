// Command clusterbench holds the measurements of scripts/bench/cluster.sh
// (docs/cluster.md §13 benchmark goals); the script starts and stops the
// ron processes, this tool loads and observes them. Three subcommands, each
// printing one JSON document on stdout:
//
//	clusterbench writes -url http://127.0.0.1:5303[,…] -token T -size 1MiB -n 200 -c 8 [-copies 2]
//	clusterbench rate -metrics http://127.0.0.1:8080/metrics[,…] [-every 1s] [-idle 5s] [-timeout 10m] [-quiet]
//	clusterbench converge -admin 127.0.0.1:8080,… -since UNIX_SECONDS [-timeout 30s]
//
// writes: closed-loop POST /o of -n distinct objects of -size bytes by -c
// workers, round-robin over the URLs; throughput and latency percentiles.
// rate: samples ron_repair_bytes_total{phase="executed"} of each node until
// repair has run and then stayed idle for -idle; per-interval rates of each
// node's active period (-quiet: only wait until nothing moves). converge: polls every node's /api/v1/status until
// each lists all of them alive and prints the time since -since (the
// script's clock reading just before it launched the nodes).
//
// Exit 1 when the measurement fails (errors, timeouts), 2 on bad flags.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// errUsage lists the subcommands.
var errUsage = errors.New("usage: clusterbench writes|rate|converge [flags] (-h for a subcommand's flags)")

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run parses and runs one subcommand; it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out, err := dispatch(ctx, args)
	var bad *usageError
	switch {
	case errors.As(err, &bad):
		fmt.Fprintln(stderr, "clusterbench:", err)
		return 2
	case err != nil:
		fmt.Fprintln(stderr, "clusterbench:", err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(stderr, "clusterbench:", err)
		return 1
	}
	return 0
}

// usageError marks a bad command line (exit 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// dispatch runs the subcommand named by args[0].
func dispatch(ctx context.Context, args []string) (any, error) {
	if len(args) == 0 {
		return nil, &usageError{errUsage}
	}
	switch args[0] {
	case "writes":
		cfg, err := parseWrites(args[1:])
		if err != nil {
			return nil, &usageError{err}
		}
		return runWrites(ctx, cfg)
	case "rate":
		cfg, err := parseRate(args[1:])
		if err != nil {
			return nil, &usageError{err}
		}
		return runRate(ctx, cfg, httpFetcher(cfg.timeoutPerScrape))
	case "converge":
		cfg, err := parseConverge(args[1:])
		if err != nil {
			return nil, &usageError{err}
		}
		return runConverge(ctx, cfg)
	}
	return nil, &usageError{fmt.Errorf("unknown subcommand %q; %w", args[0], errUsage)}
}
