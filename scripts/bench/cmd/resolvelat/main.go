// Command resolvelat is the latency client of scripts/bench/index.sh
// (docs/index.md §16): closed-loop workers GET /resolve/{key} on one index
// node for a fixed time, cycling through the keys, and it prints the
// latency percentiles and where the answers came from.
//
//	resolvelat -url http://127.0.0.1:5304 -keys site-0.bench,site-1.bench -c 4 -d 10s
//
// Requests carry Cache-Control: no-cache unless -no-cache=false, so every
// one is answered by the node's store or its peers. Output, one line:
//
//	requests=N errors=E rps=R p50_ms=… p90_ms=… p99_ms=… max_ms=… sources=peer:N[,…] partial=P
//
// Requests started within -d run to their end, so none is cut short by the
// end of the run. Errors are transport failures and non-200 answers; they
// count in requests but not in the percentiles. Exit 1 when no request
// succeeded.
package main

import (
	"context"
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
		fmt.Fprintln(os.Stderr, "resolvelat:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, newHTTPClient(cfg), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "resolvelat:", err)
		os.Exit(1)
	}
}

// errNoSuccess reports a run in which no request succeeded.
var errNoSuccess = errors.New("no request succeeded")

// run loads the node through hc for cfg.duration and writes the summary
// line to out; it fails with errNoSuccess when no request succeeded.
func run(ctx context.Context, cfg config, hc *http.Client, out io.Writer) error {
	res, err := load(ctx, cfg, hc)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(out, res.summary()); err != nil {
		return err
	}
	if len(res.lat) == 0 {
		return errNoSuccess
	}
	return nil
}
