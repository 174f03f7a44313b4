// Command openloop is the load generator of scripts/bench/gateway.sh
// (docs/gateway.md §12): fixed-rate (open-loop) HTTP load in several
// classes, each a URL with its own rate and bearer token, with latency
// measured from each request's scheduled send time, so that a slow server
// cannot slow the load down and hide its own queueing (no coordinated
// omission).
//
//	openloop -d 30s -warmup 5s -window 10s \
//	  -class name=A,rate=4800,url=http://127.0.0.1:8090/o/b3:…,token=… \
//	  -class name=B,rate=480,url=http://127.0.0.1:8090/o/b3:…,token=…
//	openloop -closed 64 -d 10s -class name=A,url=…,token=…
//
// Open loop: request i of a class is scheduled at i/rate; at most
// max_outstanding (per class, or -max-outstanding) are in flight, a
// scheduled send beyond that is dropped and counted. Closed loop (-closed
// N): N workers per class send back to back, to measure capacity.
// Requests scheduled during -warmup are reported apart; every figure is
// over the -d that follows. The JSON summary (see Summary) goes to stdout
// or -o, one human line per class to stderr. Exit 1 when no request got an
// HTTP answer, 2 on bad flags.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	cfg, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "openloop:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rts := make([]http.RoundTripper, len(cfg.classes))
	for i, c := range cfg.classes {
		idle := cfg.outstanding(c)
		if !cfg.open() {
			idle = cfg.closed
		}
		tr := newTransport(idle)
		defer tr.CloseIdleConnections()
		rts[i] = tr
	}
	if err := runTo(ctx, cfg, rts, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "openloop:", err)
		os.Exit(1)
	}
}

// errNoAnswer reports a run in which no request got an HTTP answer.
var errNoAnswer = errors.New("no request got an HTTP answer")

// runTo runs the load and writes the summary to cfg.out (stdout when
// empty) and the brief lines to brief.
func runTo(ctx context.Context, cfg config, rts []http.RoundTripper, brief io.Writer) error {
	if cfg.out == "" {
		return run(ctx, cfg, rts, os.Stdout, brief)
	}
	f, err := os.Create(cfg.out)
	if err != nil {
		return err
	}
	err = run(ctx, cfg, rts, f, brief)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// run loads, writes the JSON summary to out and the brief lines to brief;
// it fails with errNoAnswer when no request got an HTTP answer.
func run(ctx context.Context, cfg config, rts []http.RoundTripper, out, brief io.Writer) error {
	sum := summarize(cfg, load(ctx, cfg, rts))
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sum); err != nil {
		return err
	}
	printBrief(brief, sum)
	if sum.All.Completed == 0 {
		return errNoAnswer
	}
	return nil
}
