// Command readytime measures how long a server takes from process start to
// ready, for scripts/bench/edge.sh (docs/edge.md §14: Start to ready with
// every valid fixture mounted < 300 ms):
//
//	readytime -url http://127.0.0.1:18080/readyz -- ron serve --amnesia …
//
// It starts the command, polls -url every -every until it answers 200, and
// prints the time from just before the process was started to that answer,
// in milliseconds with three decimals, on stdout. The process is then asked
// to stop with SIGTERM and killed if it has not exited within -stop. Its
// output goes to -log (default: discarded). Exit 1 when the process exits
// before it is ready, -timeout passes first, or anything else fails; 2 on
// bad flags.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// Bounds of the flags.
const (
	minEvery   = 100 * time.Microsecond
	maxTimeout = 10 * time.Minute
)

// config is the parsed command line.
type config struct {
	url     string
	every   time.Duration
	timeout time.Duration
	stop    time.Duration
	log     string
	argv    []string
}

func main() {
	cfg, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "readytime:", err)
		os.Exit(2)
	}
	took, err := measure(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "readytime:", err)
		os.Exit(1)
	}
	fmt.Printf("%.3f\n", float64(took.Microseconds())/1000)
}

// errUsage reports a command line without the command to run.
var errUsage = errors.New("usage: readytime -url URL [-every D] [-timeout D] [-stop D] [-log FILE] -- COMMAND [ARGS…]")

// parseArgs parses the flags and the command after them.
func parseArgs(args []string) (config, error) {
	fs := flag.NewFlagSet("readytime", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cfg config
	fs.StringVar(&cfg.url, "url", "", "readiness URL to poll until it answers 200 (required)")
	fs.DurationVar(&cfg.every, "every", time.Millisecond, "poll interval")
	fs.DurationVar(&cfg.timeout, "timeout", 30*time.Second, "give up when not ready after this long")
	fs.DurationVar(&cfg.stop, "stop", 10*time.Second, "after SIGTERM, kill the process when it has not exited after this long")
	fs.StringVar(&cfg.log, "log", "", "file to append the process's stdout and stderr to (default: discarded)")
	if err := fs.Parse(args); err != nil {
		return config{}, fmt.Errorf("%w; %w", err, errUsage)
	}
	cfg.argv = fs.Args()
	switch {
	case cfg.url == "" || len(cfg.argv) == 0:
		return config{}, errUsage
	case cfg.every < minEvery || cfg.every > time.Second:
		return config{}, fmt.Errorf("-every %s: want %s–1s", cfg.every, minEvery)
	case cfg.timeout <= 0 || cfg.timeout > maxTimeout:
		return config{}, fmt.Errorf("-timeout %s: want (0, %s]", cfg.timeout, maxTimeout)
	case cfg.stop <= 0 || cfg.stop > maxTimeout:
		return config{}, fmt.Errorf("-stop %s: want (0, %s]", cfg.stop, maxTimeout)
	}
	return cfg, nil
}
