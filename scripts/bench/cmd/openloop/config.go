package main

import (
	"flag"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Bounds of the flags.
const (
	maxClasses     = 16
	maxRate        = 1e6 // req/s per class
	maxOutstanding = 100000
	maxClosed      = 4096
	maxDuration    = 24 * time.Hour
	maxTimeout     = 10 * time.Minute
	maxWindows     = 100000
)

// classSpec is one -class flag: a named stream of requests to one URL.
type classSpec struct {
	name           string
	url            string
	method         string  // GET or HEAD
	rate           float64 // scheduled requests per second (open loop)
	token          string  // bearer token, "" = none
	maxOutstanding int     // 0 = the -max-outstanding default
}

// config is the parsed command line.
type config struct {
	classes        []classSpec
	duration       time.Duration // measured part of the run
	warmup         time.Duration // before it, not counted
	window         time.Duration // latency windows
	timeout        time.Duration // per request
	closed         int           // closed-loop workers per class; 0 = open loop
	maxOutstanding int           // default per-class bound
	out            string        // summary file; "" = stdout
}

// open reports whether cfg runs open loop.
func (c config) open() bool { return c.closed == 0 }

// outstanding is the bound of class s.
func (c config) outstanding(s classSpec) int {
	if s.maxOutstanding > 0 {
		return s.maxOutstanding
	}
	return c.maxOutstanding
}

// parseArgs parses and validates the command line.
func parseArgs(args []string) (config, error) {
	fs := flag.NewFlagSet("openloop", flag.ContinueOnError)
	var cfg config
	var specs []string
	fs.Func("class", "request class name=N,url=U[,rate=R][,token=T][,method=GET|HEAD][,max_outstanding=M] (repeat)",
		func(s string) error { specs = append(specs, s); return nil })
	fs.DurationVar(&cfg.duration, "d", 30*time.Second, "measured duration")
	fs.DurationVar(&cfg.warmup, "warmup", 0, "load before the measured duration, reported apart")
	fs.DurationVar(&cfg.window, "window", 10*time.Second, "width of the latency windows")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "per-request timeout")
	fs.IntVar(&cfg.closed, "closed", 0, "closed loop: this many workers per class, rates ignored (0 = open loop)")
	fs.IntVar(&cfg.maxOutstanding, "max-outstanding", 1000, "requests in flight per class; beyond, scheduled sends are dropped and counted")
	fs.StringVar(&cfg.out, "o", "", "write the JSON summary to this file instead of stdout")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := checkRanges(cfg); err != nil {
		return config{}, err
	}
	for _, s := range specs {
		c, err := parseClass(s, cfg.open())
		if err != nil {
			return config{}, err
		}
		cfg.classes = append(cfg.classes, c)
	}
	return cfg, checkClasses(cfg.classes)
}

// checkRanges validates the numeric flags.
func checkRanges(c config) error {
	switch {
	case c.duration <= 0 || c.duration > maxDuration:
		return fmt.Errorf("-d %s out of range (0, %s]", c.duration, maxDuration)
	case c.warmup < 0 || c.warmup > maxDuration:
		return fmt.Errorf("-warmup %s out of range [0, %s]", c.warmup, maxDuration)
	case c.window <= 0 || c.duration/c.window > maxWindows:
		return fmt.Errorf("-window %s must be positive and give at most %d windows", c.window, maxWindows)
	case c.timeout <= 0 || c.timeout > maxTimeout:
		return fmt.Errorf("-timeout %s out of range (0, %s]", c.timeout, maxTimeout)
	case c.closed < 0 || c.closed > maxClosed:
		return fmt.Errorf("-closed %d out of range 0–%d", c.closed, maxClosed)
	case c.maxOutstanding < 1 || c.maxOutstanding > maxOutstanding:
		return fmt.Errorf("-max-outstanding %d out of range 1–%d", c.maxOutstanding, maxOutstanding)
	}
	return nil
}

// checkClasses requires 1–maxClasses classes with distinct names.
func checkClasses(cs []classSpec) error {
	if len(cs) == 0 || len(cs) > maxClasses {
		return fmt.Errorf("need 1–%d -class flags, got %d", maxClasses, len(cs))
	}
	names := make([]string, 0, len(cs))
	for _, c := range cs {
		if slices.Contains(names, c.name) {
			return fmt.Errorf("-class name %q given twice", c.name)
		}
		names = append(names, c.name)
	}
	return nil
}

// parseClass parses "key=value,…"; rate is required in open loop.
func parseClass(s string, open bool) (classSpec, error) {
	c := classSpec{method: http.MethodGet}
	seen := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			return classSpec{}, fmt.Errorf("-class %q: %q is not key=value", s, kv)
		}
		if seen[k] {
			return classSpec{}, fmt.Errorf("-class %q: %s given twice", s, k)
		}
		seen[k] = true
		if err := c.set(k, v); err != nil {
			return classSpec{}, fmt.Errorf("-class %q: %w", s, err)
		}
	}
	switch {
	case c.name == "":
		return classSpec{}, fmt.Errorf("-class %q: name is required", s)
	case c.url == "":
		return classSpec{}, fmt.Errorf("-class %q: url is required", s)
	case open && c.rate == 0:
		return classSpec{}, fmt.Errorf("-class %q: rate is required in open loop", s)
	}
	return c, nil
}

// set assigns one key of a class.
func (c *classSpec) set(k, v string) error {
	var err error
	switch k {
	case "name":
		if strings.ContainsAny(v, " \t\"") || len(v) > 64 {
			return fmt.Errorf("bad name %q", v)
		}
		c.name = v
	case "url":
		c.url, err = checkURL(v)
	case "rate":
		c.rate, err = strconv.ParseFloat(v, 64)
		if err == nil && (c.rate <= 0 || c.rate > maxRate || math.IsNaN(c.rate)) {
			err = fmt.Errorf("rate %s out of range (0, %g]", v, float64(maxRate))
		}
	case "token":
		c.token = v
	case "method":
		if v != http.MethodGet && v != http.MethodHead {
			return fmt.Errorf("method %q: GET or HEAD", v)
		}
		c.method = v
	case "max_outstanding":
		c.maxOutstanding, err = strconv.Atoi(v)
		if err == nil && (c.maxOutstanding < 1 || c.maxOutstanding > maxOutstanding) {
			err = fmt.Errorf("max_outstanding %s out of range 1–%d", v, maxOutstanding)
		}
	default:
		return fmt.Errorf("unknown key %q", k)
	}
	return err
}

// checkURL accepts an absolute http(s) URL with a host and no user info or
// fragment.
func checkURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", err
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("url %q: scheme must be http or https", raw)
	case u.Host == "":
		return "", fmt.Errorf("url %q: missing host", raw)
	case u.User != nil || u.Fragment != "":
		return "", fmt.Errorf("url %q: user info and fragment are not allowed", raw)
	}
	return raw, nil
}
