package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The series rate samples (docs/cluster.md §11).
const (
	rateSeries = "ron_repair_bytes_total"
	rateLabel  = `phase="executed"`
)

// rateConfig is the parsed rate command line.
type rateConfig struct {
	metrics          []string      // /metrics URLs, one per node
	every            time.Duration // sampling period
	idle             time.Duration // stop once repair ran and then nothing moved for this long
	timeout          time.Duration // give up after this long
	timeoutPerScrape time.Duration // one /metrics request
	quiet            bool          // wait for quiet only: nothing need have moved
}

// parseRate parses the rate flags.
func parseRate(args []string) (rateConfig, error) {
	fs := flag.NewFlagSet("rate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cfg rateConfig
	var urls string
	fs.StringVar(&urls, "metrics", "", "comma-separated /metrics URLs, one per node (required)")
	fs.DurationVar(&cfg.every, "every", time.Second, "sampling period")
	fs.DurationVar(&cfg.idle, "idle", 5*time.Second, "stop once repair has run and then no node moved a byte for this long")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "give up after this long")
	fs.BoolVar(&cfg.quiet, "quiet", false, "only wait until no node moved a byte for -idle (repair need not have run)")
	if err := fs.Parse(args); err != nil {
		return rateConfig{}, err
	}
	if fs.NArg() > 0 {
		return rateConfig{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if cfg.metrics, err = splitURLs(urls); err != nil {
		return rateConfig{}, fmt.Errorf("-metrics: %w", err)
	}
	switch {
	case cfg.every < 10*time.Millisecond || cfg.every > time.Minute:
		return rateConfig{}, fmt.Errorf("-every %s: want 10ms–1m", cfg.every)
	case cfg.idle < cfg.every || cfg.idle > time.Hour:
		return rateConfig{}, fmt.Errorf("-idle %s: want -every–1h", cfg.idle)
	case cfg.timeout <= cfg.idle || cfg.timeout > 24*time.Hour:
		return rateConfig{}, fmt.Errorf("-timeout %s: want (-idle, 24h]", cfg.timeout)
	}
	cfg.timeoutPerScrape = min(cfg.every, 5*time.Second)
	return cfg, nil
}

// fetcher reads the summed value of the executed-bytes series from url.
type fetcher func(ctx context.Context, url string) (float64, error)

// httpFetcher scrapes a Prometheus text page with a per-request timeout.
func httpFetcher(timeout time.Duration) fetcher {
	client := &http.Client{Timeout: timeout}
	return func(ctx context.Context, url string) (float64, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("%s: status %d", url, resp.StatusCode)
		}
		return seriesSum(body, rateSeries, rateLabel)
	}
}

// seriesSum sums the samples of name whose labels contain label; a page
// without any is 0 (a counter vector before its first increment).
func seriesSum(page []byte, name, label string) (float64, error) {
	var sum float64
	sc := bufio.NewScanner(bytes.NewReader(page))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") || !strings.Contains(line, label) {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

// sample is one reading of one node's counter, at an offset from the start.
type sample struct {
	at time.Duration
	v  float64
}

// nodeRate is one node's result.
type nodeRate struct {
	URL       string    `json:"url"`
	Bytes     float64   `json:"bytes"`    // executed repair bytes while sampled
	ActiveS   float64   `json:"active_s"` // from the first to the last interval that moved bytes
	Intervals int       `json:"intervals"`
	MedianBps float64   `json:"median_bps"`
	P10Bps    float64   `json:"p10_bps"`
	P90Bps    float64   `json:"p90_bps"`
	MeanBps   float64   `json:"mean_bps"`
	Rates     []float64 `json:"rates_bps"` // per interval of the active period, edges trimmed
}

// rateResult is the rate summary.
type rateResult struct {
	Nodes     []nodeRate `json:"nodes"`
	MedianBps float64    `json:"median_bps"` // over every active node's interval rates
	TimedOut  bool       `json:"timed_out"`
}

// runRate samples every cfg.every until repair has moved bytes (with
// cfg.quiet: not needed) and then every node stayed still for cfg.idle, or
// cfg.timeout passes.
func runRate(ctx context.Context, cfg rateConfig, fetch fetcher) (rateResult, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	start := time.Now()
	series := make([][]sample, len(cfg.metrics))
	tick := time.NewTicker(cfg.every)
	defer tick.Stop()
	for {
		for i, u := range cfg.metrics {
			if v, err := fetch(ctx, u); err == nil {
				series[i] = append(series[i], sample{at: time.Since(start), v: v})
			}
		}
		if settled(series, time.Since(start), cfg.idle, cfg.quiet) {
			return summarizeRates(cfg.metrics, series, false), nil
		}
		select {
		case <-ctx.Done():
			if cfg.quiet {
				return rateResult{}, fmt.Errorf("repair did not go quiet within %s", cfg.timeout)
			}
			if !anyMoved(series) {
				return rateResult{}, fmt.Errorf("no repair bytes executed within %s", cfg.timeout)
			}
			return summarizeRates(cfg.metrics, series, true), nil
		case <-tick.C:
		}
	}
}

// settled reports whether some node moved bytes (unless quiet) and no node
// moved any in the last idle.
func settled(series [][]sample, now, idle time.Duration, quiet bool) bool {
	if !anyMoved(series) {
		return quiet && now >= idle
	}
	for _, s := range series {
		if last := lastMove(s); last >= 0 && now-last < idle {
			return false
		}
	}
	return true
}

// anyMoved reports whether any node's counter increased.
func anyMoved(series [][]sample) bool {
	for _, s := range series {
		if lastMove(s) >= 0 {
			return true
		}
	}
	return false
}

// lastMove is the offset of the last sample at which s increased; -1 when
// it never did.
func lastMove(s []sample) time.Duration {
	for i := len(s) - 1; i > 0; i-- {
		if s[i].v > s[i-1].v {
			return s[i].at
		}
	}
	return -1
}

// summarizeRates computes each node's interval rates over its active period.
func summarizeRates(urls []string, series [][]sample, timedOut bool) rateResult {
	res := rateResult{TimedOut: timedOut}
	var all []float64
	for i, s := range series {
		nr := nodeRates(urls[i], s)
		all = append(all, nr.Rates...)
		res.Nodes = append(res.Nodes, nr)
	}
	res.MedianBps = quantile(all, 0.5)
	return res
}

// nodeRates is one node's summary: the rates of the intervals from the
// first to the last one that moved bytes; with three or more, the first and
// last are left out (they are partly idle).
func nodeRates(url string, s []sample) nodeRate {
	nr := nodeRate{URL: url}
	if len(s) < 2 {
		return nr
	}
	nr.Bytes = s[len(s)-1].v - s[0].v
	first, last := -1, -1
	for i := 1; i < len(s); i++ {
		if s[i].v > s[i-1].v {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return nr
	}
	nr.ActiveS = (s[last].at - s[first-1].at).Seconds()
	var rates []float64
	for i := first; i <= last; i++ {
		if dt := (s[i].at - s[i-1].at).Seconds(); dt > 0 {
			rates = append(rates, (s[i].v-s[i-1].v)/dt)
		}
	}
	if len(rates) >= 3 {
		rates = rates[1 : len(rates)-1]
	}
	nr.Rates, nr.Intervals = rates, len(rates)
	nr.MedianBps, nr.P10Bps, nr.P90Bps = quantile(rates, 0.5), quantile(rates, 0.1), quantile(rates, 0.9)
	var sum float64
	for _, r := range rates {
		sum += r
	}
	nr.MeanBps = sum / float64(len(rates))
	return nr
}

// quantile is the linearly interpolated q-quantile of xs (0 when empty).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(pos)
	if lo+1 >= len(s) {
		return s[lo]
	}
	return s[lo] + (pos-float64(lo))*(s[lo+1]-s[lo])
}
