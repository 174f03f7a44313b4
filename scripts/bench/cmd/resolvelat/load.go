package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/httpx/client"
	"golang.org/x/sync/errgroup"
)

// maxBody bounds a read answer (a resolve answer is well under 64 KiB).
const maxBody = 1 << 20

// result is what a run observed. lat holds the successful requests only.
type result struct {
	lat      []time.Duration
	errors   int
	sources  map[string]int
	partial  int
	elapsed  time.Duration
	lastFail string
}

// merge adds o into r.
func (r *result) merge(o result) {
	r.lat = append(r.lat, o.lat...)
	r.errors += o.errors
	r.partial += o.partial
	for k, v := range o.sources {
		r.sources[k] += v
	}
	if o.lastFail != "" {
		r.lastFail = o.lastFail
	}
}

func newHTTPClient(cfg config) *http.Client {
	return &http.Client{Transport: client.NewTransport(client.TransportOptions{Base: client.BaseBare, MaxIdleConnsPerHost: cfg.concurrency})}
}

// load runs cfg.concurrency closed-loop workers that start requests for
// cfg.duration and merges what they saw. A request started in time runs to
// its end (or cfg.timeout), so none is cut short by the end of the run; ctx
// ending (a signal) cancels everything. The workers are owned by one
// errgroup and have all returned when load does.
func load(ctx context.Context, cfg config, hc *http.Client) (result, error) {
	defer hc.CloseIdleConnections()
	window, stop := context.WithTimeout(ctx, cfg.duration)
	defer stop()
	var next atomic.Uint64
	parts := make([]result, cfg.concurrency)
	var g errgroup.Group
	start := time.Now()
	for w := range parts {
		g.Go(func() error { // worker w
			parts[w] = worker(ctx, window, cfg, hc, &next)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return result{}, err
	}
	total := result{sources: map[string]int{}, elapsed: time.Since(start)}
	for _, p := range parts {
		total.merge(p)
	}
	return total, nil
}

// worker starts requests one after another while window lasts; each runs
// under ctx. A request that fails because ctx ended is not counted.
func worker(ctx, window context.Context, cfg config, hc *http.Client, next *atomic.Uint64) result {
	r := result{sources: map[string]int{}}
	for window.Err() == nil {
		key := cfg.keys[(next.Add(1)-1)%uint64(len(cfg.keys))]
		start := time.Now()
		a, err := resolveOnce(ctx, cfg, hc, key)
		d := time.Since(start)
		switch {
		case err != nil && ctx.Err() != nil:
			return r
		case err != nil:
			r.errors++
			r.lastFail = err.Error()
		default:
			r.lat = append(r.lat, d)
			r.sources[a.Source]++
			if a.Partial {
				r.partial++
			}
		}
	}
	return r
}

// answer is the part of a resolve answer resolvelat looks at.
type answer struct {
	Source  string `json:"source"`
	Partial bool   `json:"partial"`
}

// resolveOnce GETs /resolve/{key} under cfg.timeout and decodes the answer;
// a non-200 status is an error.
func resolveOnce(ctx context.Context, cfg config, hc *http.Client, key string) (answer, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.base.String()+"/resolve/"+key, nil)
	if err != nil {
		return answer{}, err
	}
	if cfg.noCache {
		req.Header.Set("Cache-Control", "no-cache")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return answer{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return answer{}, fmt.Errorf("%s: status %d: %.200s", key, resp.StatusCode, body)
	}
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		return answer{}, fmt.Errorf("%s: answer: %w", key, err)
	}
	if a.Source == "" {
		return answer{}, errors.New(key + ": answer without source")
	}
	return a, nil
}

// summary renders the one-line report.
func (r result) summary() string {
	lat := slices.Clone(r.lat)
	slices.Sort(lat)
	n := len(lat) + r.errors
	rps := 0.0
	if r.elapsed > 0 {
		rps = float64(n) / r.elapsed.Seconds()
	}
	var src []string
	for _, k := range slices.Sorted(maps.Keys(r.sources)) {
		src = append(src, fmt.Sprintf("%s:%d", k, r.sources[k]))
	}
	s := fmt.Sprintf("requests=%d errors=%d rps=%.1f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f sources=%s partial=%d",
		n, r.errors, rps, ms(percentile(lat, 0.50)), ms(percentile(lat, 0.90)), ms(percentile(lat, 0.99)),
		ms(percentile(lat, 1)), strings.Join(src, ","), r.partial)
	if r.lastFail != "" {
		s += fmt.Sprintf(" last_error=%q", r.lastFail)
	}
	return s
}

// percentile is the nearest-rank p-quantile (0 < p ≤ 1) of sorted; 0 when
// it is empty.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
