// Package serve runs the small HTTP servers of the benchmark helpers
// (scripts/bench/cmd): bind, announce the bound address, serve until the
// context ends, then shut down within a bounded time.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// ShutdownTimeout bounds the graceful shutdown after the context ends.
const ShutdownTimeout = 5 * time.Second

// NewServer returns an http.Server for h with the header and idle timeouts
// every benchmark helper uses.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
}

// Run binds addr (host:port; port 0 picks one), writes "listening on
// <addr>" to out, and serves h until ctx ends. It then shuts the server down,
// waiting at most ShutdownTimeout for in-flight requests, and returns nil;
// a bind or serve error is returned as is.
func Run(ctx context.Context, addr string, h http.Handler, out io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := NewServer(h)
	if _, err := fmt.Fprintf(out, "listening on %s\n", ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }() // owned: Run waits for it below
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	shutErr := srv.Shutdown(sctx)
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if shutErr != nil {
		_ = srv.Close()
	}
	return nil
}
