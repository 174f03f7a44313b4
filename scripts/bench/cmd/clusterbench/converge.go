package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ronhq/ron/httpx/client"
)

// convergeConfig is the parsed converge command line.
type convergeConfig struct {
	admins  []string  // admin listeners host:port
	since   time.Time // the script's clock reading before the launch
	timeout time.Duration
	every   time.Duration
}

// parseConverge parses the converge flags.
func parseConverge(args []string) (convergeConfig, error) {
	fs := flag.NewFlagSet("converge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cfg convergeConfig
	var admins, since string
	fs.StringVar(&admins, "admin", "", "comma-separated admin listeners host:port, one per node (required)")
	fs.StringVar(&since, "since", "", "Unix time in seconds (bash $EPOCHREALTIME) taken just before the nodes were launched (required)")
	fs.DurationVar(&cfg.timeout, "timeout", 30*time.Second, "give up after this long")
	fs.DurationVar(&cfg.every, "every", 20*time.Millisecond, "poll period")
	if err := fs.Parse(args); err != nil {
		return convergeConfig{}, err
	}
	if fs.NArg() > 0 {
		return convergeConfig{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, a := range strings.Split(admins, ",") {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return convergeConfig{}, fmt.Errorf("-admin %q: not host:port", a)
		}
		cfg.admins = append(cfg.admins, a)
	}
	secs, err := strconv.ParseFloat(since, 64)
	switch {
	case err != nil || secs <= 0 || math.IsInf(secs, 0):
		return convergeConfig{}, fmt.Errorf("-since %q: want Unix seconds", since)
	case cfg.timeout <= 0 || cfg.timeout > maxTimeout:
		return convergeConfig{}, fmt.Errorf("-timeout %s: want (0, %s]", cfg.timeout, maxTimeout)
	case cfg.every < time.Millisecond || cfg.every > time.Second:
		return convergeConfig{}, fmt.Errorf("-every %s: want 1ms–1s", cfg.every)
	}
	whole, frac := math.Modf(secs)
	cfg.since = time.Unix(int64(whole), int64(frac*1e9))
	return cfg, nil
}

// convergeResult is the converge summary.
type convergeResult struct {
	Members int     `json:"members"`
	Ms      float64 `json:"ms"` // from -since to the poll that saw every member alive everywhere
	Polls   int     `json:"polls"`
}

// membersFetcher returns the states a node reports (member id → state).
type membersFetcher func(ctx context.Context, admin string) (map[string]string, error)

// runConverge polls until every node lists len(admins) members, all alive.
func runConverge(ctx context.Context, cfg convergeConfig) (convergeResult, error) {
	tr := client.NewTransport(client.TransportOptions{Base: client.BaseBare})
	defer tr.CloseIdleConnections()
	return converge(ctx, cfg, statusMembers(&http.Client{Transport: tr, Timeout: time.Second}))
}

// converge is runConverge with the status reader given.
func converge(ctx context.Context, cfg convergeConfig, fetch membersFetcher) (convergeResult, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	tick := time.NewTicker(cfg.every)
	defer tick.Stop()
	var last string
	for polls := 1; ; polls++ {
		ok, seen := allAlive(ctx, cfg.admins, fetch)
		if ok {
			return convergeResult{Members: len(cfg.admins), Ms: float64(time.Since(cfg.since).Microseconds()) / 1000, Polls: polls}, nil
		}
		last = seen
		select {
		case <-ctx.Done():
			return convergeResult{}, fmt.Errorf("not converged within %s; last seen: %s", cfg.timeout, last)
		case <-tick.C:
		}
	}
}

// allAlive reports whether every node lists exactly len(admins) members,
// all alive, and describes the first node that does not.
func allAlive(ctx context.Context, admins []string, fetch membersFetcher) (bool, string) {
	for _, a := range admins {
		states, err := fetch(ctx, a)
		if err != nil {
			return false, fmt.Sprintf("%s: %v", a, err)
		}
		alive := 0
		for _, s := range states {
			if s == "alive" {
				alive++
			}
		}
		if len(states) != len(admins) || alive != len(admins) {
			return false, fmt.Sprintf("%s sees %v", a, states)
		}
	}
	return true, ""
}

// statusMembers reads cluster.members of /api/v1/status (docs/cluster.md §9).
func statusMembers(client *http.Client) membersFetcher {
	return func(ctx context.Context, admin string) (map[string]string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+admin+"/api/v1/status", nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var st struct {
			Cluster *struct {
				Members []struct {
					ID    string `json:"id"`
					State string `json:"state"`
				} `json:"members"`
			} `json:"cluster"`
		}
		if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&st); err != nil {
			return nil, fmt.Errorf("status: %v", err)
		}
		if st.Cluster == nil {
			return nil, fmt.Errorf("status without cluster")
		}
		out := map[string]string{}
		for _, m := range st.Cluster.Members {
			out[m.ID] = m.State
		}
		return out, nil
	}
}
