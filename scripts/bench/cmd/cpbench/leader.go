package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ronhq/ron/httpx/client"
)

// Bounds shared by the subcommands' flags.
const (
	maxTimeout = 10 * time.Minute
	maxNodes   = 7 // cluster.bootstrap_expect's bound
)

// cpStatus is the part of a node's /api/v1/status this tool reads
// (control_plane, docs/cluster.md §14).
type cpStatus struct {
	ID      string     `json:"id"`
	State   string     `json:"state"`
	Leader  string     `json:"leader"`
	Applied uint64     `json:"applied_index"`
	Servers []cpServer `json:"servers"`
}

// cpServer is one entry of control_plane.servers.
type cpServer struct {
	ID     string `json:"id"`
	Voter  bool   `json:"voter"`
	Leader bool   `json:"leader"`
	Gossip string `json:"gossip"`
}

// statusFetcher reads one node's control-plane status (admin host:port).
type statusFetcher func(ctx context.Context, admin string) (cpStatus, error)

// httpStatus reads control_plane of http://admin/api/v1/status.
func httpStatus(c *http.Client) statusFetcher {
	return func(ctx context.Context, admin string) (cpStatus, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+admin+"/api/v1/status", nil)
		if err != nil {
			return cpStatus{}, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return cpStatus{}, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return cpStatus{}, fmt.Errorf("status: HTTP %d", resp.StatusCode)
		}
		var st struct {
			ControlPlane *cpStatus `json:"control_plane"`
		}
		if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&st); err != nil {
			return cpStatus{}, fmt.Errorf("status: %v", err)
		}
		if st.ControlPlane == nil {
			return cpStatus{}, fmt.Errorf("status without control_plane")
		}
		return *st.ControlPlane, nil
	}
}

// newStatusClient is a keep-alive client for status polls.
func newStatusClient(timeout time.Duration) (*http.Client, func()) {
	tr := client.NewTransport(client.TransportOptions{Base: client.BaseBare, MaxIdleConnsPerHost: 4})
	return &http.Client{Transport: tr, Timeout: timeout}, tr.CloseIdleConnections
}

// splitAdmins parses a comma-separated list of host:port.
func splitAdmins(s string) ([]string, error) {
	if s == "" {
		return nil, fmt.Errorf("at least one host:port is required")
	}
	var out []string
	for _, a := range strings.Split(s, ",") {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, fmt.Errorf("%q: not host:port", a)
		}
		out = append(out, a)
	}
	if len(out) > maxNodes {
		return nil, fmt.Errorf("%d nodes: at most %d", len(out), maxNodes)
	}
	return out, nil
}

// leaderConfig is the parsed leader command line.
type leaderConfig struct {
	admins   []string
	caughtUp bool
	timeout  time.Duration
	every    time.Duration
}

// parseLeader parses the leader flags.
func parseLeader(args []string) (leaderConfig, error) {
	fs := flag.NewFlagSet("leader", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cfg leaderConfig
	var admins string
	fs.StringVar(&admins, "admin", "", "comma-separated admin listeners host:port, one per server (required)")
	fs.BoolVar(&cfg.caughtUp, "caught-up", false, "also wait until every node has applied as far as the leader")
	fs.DurationVar(&cfg.timeout, "timeout", time.Minute, "give up after this long")
	fs.DurationVar(&cfg.every, "every", 20*time.Millisecond, "poll period")
	if err := fs.Parse(args); err != nil {
		return leaderConfig{}, err
	}
	if fs.NArg() > 0 {
		return leaderConfig{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if cfg.admins, err = splitAdmins(admins); err != nil {
		return leaderConfig{}, fmt.Errorf("-admin: %w", err)
	}
	switch {
	case cfg.timeout <= 0 || cfg.timeout > maxTimeout:
		return leaderConfig{}, fmt.Errorf("-timeout %s: want (0, %s]", cfg.timeout, maxTimeout)
	case cfg.every < time.Millisecond || cfg.every > time.Second:
		return leaderConfig{}, fmt.Errorf("-every %s: want 1ms–1s", cfg.every)
	}
	return cfg, nil
}

// leaderResult is the leader summary.
type leaderResult struct {
	Leader      string   `json:"leader"`       // its node id
	LeaderAdmin string   `json:"leader_admin"` // its admin listener
	LeaderPos   int      `json:"leader_pos"`   // its position in -admin (0-based)
	IDs         []string `json:"ids"`          // node ids in -admin order
	Applied     []uint64 `json:"applied"`      // applied indexes in -admin order
	Ms          float64  `json:"ms"`           // time until the condition held
	Polls       int      `json:"polls"`
}

// runLeader polls until the agreement (and -caught-up) holds.
func runLeader(ctx context.Context, cfg leaderConfig) (leaderResult, error) {
	c, done := newStatusClient(time.Second)
	defer done()
	return waitLeader(ctx, cfg, httpStatus(c))
}

// waitLeader is runLeader with the status reader given.
func waitLeader(ctx context.Context, cfg leaderConfig, fetch statusFetcher) (leaderResult, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	tick := time.NewTicker(cfg.every)
	defer tick.Stop()
	var last string
	for polls := 1; ; polls++ {
		sts, err := fetchAll(ctx, cfg.admins, fetch)
		if err == nil {
			var res leaderResult
			if res, err = agreed(cfg.admins, sts, cfg.caughtUp); err == nil {
				res.Ms, res.Polls = float64(time.Since(start).Microseconds())/1000, polls
				return res, nil
			}
		}
		last = err.Error()
		select {
		case <-ctx.Done():
			return leaderResult{}, fmt.Errorf("no agreed leader within %s; last seen: %s", cfg.timeout, last)
		case <-tick.C:
		}
	}
}

// fetchAll reads every node's status (in -admin order).
func fetchAll(ctx context.Context, admins []string, fetch statusFetcher) ([]cpStatus, error) {
	out := make([]cpStatus, len(admins))
	for i, a := range admins {
		st, err := fetch(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		out[i] = st
	}
	return out, nil
}

// agreed checks the leader condition over sts (in admins order): one
// leader named by all, leading by its own account, every node listing
// every node as an alive voter, and (caughtUp) no node behind the leader.
func agreed(admins []string, sts []cpStatus, caughtUp bool) (leaderResult, error) {
	res := leaderResult{LeaderPos: -1}
	ids := map[string]bool{}
	for _, st := range sts {
		res.IDs = append(res.IDs, st.ID)
		res.Applied = append(res.Applied, st.Applied)
		ids[st.ID] = true
	}
	if len(ids) != len(sts) {
		return leaderResult{}, fmt.Errorf("node ids %v are not distinct", res.IDs)
	}
	leader := sts[0].Leader
	for i, st := range sts {
		if st.Leader == "" || st.Leader != leader {
			return leaderResult{}, fmt.Errorf("%s (%s) names leader %q, %s names %q", admins[i], st.ID, st.Leader, admins[0], leader)
		}
		if st.ID == leader {
			if st.State != "leader" {
				return leaderResult{}, fmt.Errorf("%s is named leader but is %s", st.ID, st.State)
			}
			res.LeaderPos = i
		}
	}
	if res.LeaderPos < 0 {
		return leaderResult{}, fmt.Errorf("leader %q is not among the nodes %v", leader, res.IDs)
	}
	for i, st := range sts {
		alive := 0
		for _, s := range st.Servers {
			if ids[s.ID] && s.Voter && s.Gossip == "alive" {
				alive++
			}
		}
		if alive != len(sts) || len(st.Servers) != len(sts) {
			return leaderResult{}, fmt.Errorf("%s lists servers %+v", st.ID, st.Servers)
		}
		if caughtUp && st.Applied < sts[res.LeaderPos].Applied {
			return leaderResult{}, fmt.Errorf("%s (%s) applied %d, the leader %d", admins[i], st.ID, st.Applied, sts[res.LeaderPos].Applied)
		}
	}
	res.Leader, res.LeaderAdmin = leader, admins[res.LeaderPos]
	return res, nil
}
