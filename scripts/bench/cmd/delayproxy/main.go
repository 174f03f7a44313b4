// Command delayproxy is the slow peer of scripts/bench/index.sh (docs/index.md
// §16): a reverse proxy on loopback that holds every request for a fixed
// delay before forwarding it unchanged (path and query) to one target.
//
//	delayproxy -listen 127.0.0.1:15304 -target http://127.0.0.1:25304 -delay 1s
//
// A request whose client gives up during the delay (a cancelled hedge leg)
// is dropped without reaching the target. It serves until SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/scripts/bench/cmd/internal/serve"
)

// maxDelay bounds -delay.
const maxDelay = time.Minute

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "delayproxy:", err)
		os.Exit(1)
	}
}

// run parses args and serves the proxy until a signal arrives.
func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("delayproxy", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (host:port)")
	target := fs.String("target", "", "base URL to forward to, e.g. http://127.0.0.1:5304 (required)")
	delay := fs.Duration("delay", time.Second, fmt.Sprintf("delay before forwarding each request (0–%s)", maxDelay))
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	u, err := parseTarget(*target)
	if err != nil {
		return err
	}
	if *delay < 0 || *delay > maxDelay {
		return fmt.Errorf("delay %s out of range 0–%s", *delay, maxDelay)
	}
	tr := client.NewTransport(client.TransportOptions{Base: client.BaseBare, MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second})
	defer tr.CloseIdleConnections()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve.Run(ctx, *listen, New(u, *delay, tr), out)
}

// parseTarget accepts an absolute http(s) URL with a host and no query,
// fragment or user info.
func parseTarget(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, fmt.Errorf("target %q: %w", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("target %q: scheme must be http or https", raw)
	case u.Host == "":
		return nil, fmt.Errorf("target %q: missing host", raw)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("target %q: user info, query and fragment are not allowed", raw)
	}
	return u, nil
}

// New returns the proxy: every request waits delay (or until its client
// gives up, then it is dropped), then goes to target through tr with its
// path and query. Upstream failures answer 502.
func New(target *url.URL, delay time.Duration, tr http.RoundTripper) http.Handler {
	rp := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport: tr,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() == nil && !errors.Is(err, context.Canceled) {
				log.Printf("delayproxy: %s %s: %v", r.Method, r.URL, err)
			}
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
		rp.ServeHTTP(w, r)
	})
}
