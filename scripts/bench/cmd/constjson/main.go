// Command constjson is the reference server of scripts/bench/index.sh
// (docs/index.md §16): a trivial net/http handler that answers every request
// with one constant JSON body, so that wrk can measure ron's cached resolve
// against "the same bytes, no work" on the same machine.
//
//	constjson -listen 127.0.0.1:18080 -body-file answer.json
//	constjson -listen 127.0.0.1:18080 -size 600
//
// With -body-file the file's bytes are served as they are; otherwise the
// body is a JSON object padded to exactly -size bytes. It serves until
// SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/ronhq/ron/scripts/bench/cmd/internal/serve"
)

// Body size bounds of -size.
const (
	minSize = len(`{"pad":""}`)
	maxSize = 1 << 20
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "constjson:", err)
		os.Exit(1)
	}
}

// run parses args, builds the body and serves until a signal arrives.
func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("constjson", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (host:port)")
	size := fs.Int("size", 512, fmt.Sprintf("body size in bytes (%d–%d) when -body-file is not given", minSize, maxSize))
	bodyFile := fs.String("body-file", "", "serve this file's bytes as the body")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	body, err := loadBody(*bodyFile, *size)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve.Run(ctx, *listen, Handler(body), out)
}

// loadBody returns the file's bytes when path is set, else PadBody(size).
func loadBody(path string, size int) ([]byte, error) {
	if path == "" {
		return PadBody(size)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 || len(b) > maxSize {
		return nil, fmt.Errorf("body file %s: %d bytes, want 1–%d", path, len(b), maxSize)
	}
	return b, nil
}

// PadBody returns the JSON object {"pad":"xx…x"} of exactly size bytes;
// size must be in [minSize, maxSize].
func PadBody(size int) ([]byte, error) {
	if size < minSize || size > maxSize {
		return nil, fmt.Errorf("size %d out of range %d–%d", size, minSize, maxSize)
	}
	return []byte(`{"pad":"` + strings.Repeat("x", size-minSize) + `"}`), nil
}

// Handler answers every request with 200, Content-Type application/json
// and body.
func Handler(body []byte) http.Handler {
	n := strconv.Itoa(len(body))
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", n)
		_, _ = w.Write(body)
	})
}
