package main

import (
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Bounds of the flags.
const (
	maxConcurrency = 1024
	maxDuration    = time.Hour
	maxTimeout     = time.Minute
)

// config is the parsed command line.
type config struct {
	base        *url.URL // node base URL
	keys        []string // resolve keys, cycled
	concurrency int
	duration    time.Duration
	timeout     time.Duration // per request
	noCache     bool
}

// parseArgs parses and validates the command line.
func parseArgs(args []string) (config, error) {
	fs := flag.NewFlagSet("resolvelat", flag.ContinueOnError)
	base := fs.String("url", "", "index base URL, e.g. http://127.0.0.1:5304 (required)")
	keys := fs.String("keys", "", "comma-separated resolve keys (names, name@version or b3:…) (required)")
	c := fs.Int("c", 4, fmt.Sprintf("concurrent workers (1–%d)", maxConcurrency))
	d := fs.Duration("d", 10*time.Second, fmt.Sprintf("how long to run (up to %s)", maxDuration))
	timeout := fs.Duration("timeout", 5*time.Second, fmt.Sprintf("per-request timeout (up to %s)", maxTimeout))
	noCache := fs.Bool("no-cache", true, "send Cache-Control: no-cache (bypass the node's caches)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	cfg := config{concurrency: *c, duration: *d, timeout: *timeout, noCache: *noCache}
	var err error
	if cfg.base, err = parseBase(*base); err != nil {
		return config{}, err
	}
	if cfg.keys, err = parseKeys(*keys); err != nil {
		return config{}, err
	}
	return cfg, checkRanges(cfg)
}

// parseBase accepts an absolute http(s) URL with a host and no query,
// fragment or user info; a trailing slash is dropped.
func parseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, fmt.Errorf("-url %q: %w", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("-url %q: scheme must be http or https", raw)
	case u.Host == "":
		return nil, fmt.Errorf("-url %q: missing host", raw)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("-url %q: user info, query and fragment are not allowed", raw)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	return u, nil
}

// parseKeys splits the comma list; empty items and '/' are rejected (the
// key is one path segment).
func parseKeys(raw string) ([]string, error) {
	if raw == "" {
		return nil, fmt.Errorf("-keys is required")
	}
	keys := strings.Split(raw, ",")
	for _, k := range keys {
		if k == "" || strings.ContainsAny(k, "/?# ") {
			return nil, fmt.Errorf("-keys: bad key %q", k)
		}
	}
	return keys, nil
}

// checkRanges validates the numeric flags.
func checkRanges(cfg config) error {
	switch {
	case cfg.concurrency < 1 || cfg.concurrency > maxConcurrency:
		return fmt.Errorf("-c %d out of range 1–%d", cfg.concurrency, maxConcurrency)
	case cfg.duration <= 0 || cfg.duration > maxDuration:
		return fmt.Errorf("-d %s out of range (0, %s]", cfg.duration, maxDuration)
	case cfg.timeout <= 0 || cfg.timeout > maxTimeout:
		return fmt.Errorf("-timeout %s out of range (0, %s]", cfg.timeout, maxTimeout)
	}
	return nil
}
