package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ronhq/ron/httpx/client"
)

// Bounds of the cas flags.
const maxWorkers = 256

// casConfig is the parsed cas command line.
type casConfig struct {
	urls     []string // index base URLs; writer i uses urls[i mod len]
	token    string   // bearer token with index:write
	c        int      // writers
	duration time.Duration
	prefix   string // writer i writes the name prefix-i
	timeout  time.Duration
	pause    time.Duration // after a write that was not acknowledged
}

// parseCAS parses the cas flags.
func parseCAS(args []string) (casConfig, error) {
	fs := flag.NewFlagSet("cas", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cfg casConfig
	var urls string
	fs.StringVar(&urls, "url", "", "comma-separated index base URLs (required)")
	fs.StringVar(&cfg.token, "token", "", "bearer token with index:write (required)")
	fs.IntVar(&cfg.c, "c", 8, "concurrent writers, each with its own name")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "how long to write")
	fs.StringVar(&cfg.prefix, "prefix", "cas", "name prefix (writer i writes PREFIX-i; use a new prefix per run)")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "client timeout of one write")
	fs.DurationVar(&cfg.pause, "pause", 10*time.Millisecond, "pause after a write that was not acknowledged")
	if err := fs.Parse(args); err != nil {
		return casConfig{}, err
	}
	if fs.NArg() > 0 {
		return casConfig{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if cfg.urls, err = splitURLs(urls); err != nil {
		return casConfig{}, fmt.Errorf("-url: %w", err)
	}
	switch {
	case cfg.token == "":
		return casConfig{}, fmt.Errorf("-token is required")
	case cfg.c < 1 || cfg.c > maxWorkers:
		return casConfig{}, fmt.Errorf("-c %d: want 1–%d", cfg.c, maxWorkers)
	case cfg.duration <= 0 || cfg.duration > maxTimeout:
		return casConfig{}, fmt.Errorf("-duration %s: want (0, %s]", cfg.duration, maxTimeout)
	case !validName(cfg.prefix + "-" + strconv.Itoa(cfg.c)):
		return casConfig{}, fmt.Errorf("-prefix %q: want [a-z0-9-], not starting with -, at most 59 characters", cfg.prefix)
	case cfg.timeout <= 0 || cfg.timeout > time.Minute:
		return casConfig{}, fmt.Errorf("-timeout %s: want (0, 1m]", cfg.timeout)
	case cfg.pause < 0 || cfg.pause > time.Second:
		return casConfig{}, fmt.Errorf("-pause %s: want [0, 1s]", cfg.pause)
	}
	return cfg, nil
}

// casResult is the cas summary: acknowledged compare-and-swaps and the
// latency of those; refused or failed writes by kind.
type casResult struct {
	Writers    int            `json:"writers"`
	URLs       int            `json:"urls"`
	Seconds    float64        `json:"seconds"`
	Acked      int            `json:"acked"`
	WritesPerS float64        `json:"writes_per_s"`
	P50Ms      float64        `json:"p50_ms"`
	P90Ms      float64        `json:"p90_ms"`
	P99Ms      float64        `json:"p99_ms"`
	MaxMs      float64        `json:"max_ms"`
	Failures   map[string]int `json:"failures"`
	LastFail   string         `json:"last_failure,omitempty"`
}

// runCAS runs the writers for cfg.duration.
func runCAS(ctx context.Context, cfg casConfig) (casResult, error) {
	tr := client.NewTransport(client.TransportOptions{Base: client.BaseBare, MaxIdleConnsPerHost: cfg.c, DisableCompression: true})
	defer tr.CloseIdleConnections()
	return casLoad(ctx, cfg, &http.Client{Transport: tr, Timeout: cfg.timeout})
}

// casLoad is runCAS with the client given.
func casLoad(ctx context.Context, cfg casConfig, hc *http.Client) (casResult, error) {
	res := casResult{Writers: cfg.c, URLs: len(cfg.urls), Failures: map[string]int{}}
	var mu sync.Mutex
	var lat []time.Duration
	start := time.Now()
	end := start.Add(cfg.duration)
	var wg sync.WaitGroup
	for i := range cfg.c {
		wg.Go(func() {
			cw := casWriter{cfg: cfg, hc: hc, base: cfg.urls[i%len(cfg.urls)], name: cfg.prefix + "-" + strconv.Itoa(i)}
			mine, fails, last := cw.loop(ctx, end)
			mu.Lock()
			defer mu.Unlock()
			lat = append(lat, mine...)
			for k, v := range fails {
				res.Failures[k] += v
			}
			if last != "" {
				res.LastFail = last
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return casResult{}, err
	}
	took := time.Since(start)
	if len(lat) == 0 {
		return casResult{}, fmt.Errorf("no write acknowledged in %s (failures %v; last: %s)", cfg.duration, res.Failures, res.LastFail)
	}
	slices.Sort(lat)
	res.Seconds, res.Acked = took.Seconds(), len(lat)
	res.WritesPerS = float64(len(lat)) / took.Seconds()
	res.P50Ms, res.P90Ms = ms(percentile(lat, 0.50)), ms(percentile(lat, 0.90))
	res.P99Ms, res.MaxMs = ms(percentile(lat, 0.99)), ms(percentile(lat, 1))
	return res, nil
}

// casWriter swaps one name.
type casWriter struct {
	cfg        casConfig
	hc         *http.Client
	base, name string
}

// loop writes until end: the latencies of acknowledged writes, failures
// by kind and the last failure's text.
func (w casWriter) loop(ctx context.Context, end time.Time) ([]time.Duration, map[string]int, string) {
	var lat []time.Duration
	fails := map[string]int{}
	last := ""
	version := 0 // 0: the name is absent (If-None-Match: *)
	for i := 1; ctx.Err() == nil && time.Now().Before(end); i++ {
		t0 := time.Now()
		v, kind, detail := w.put(ctx, version, i)
		switch {
		case ctx.Err() != nil:
			return lat, fails, last
		case kind == "":
			lat = append(lat, time.Since(t0))
			version = v
			continue
		case kind == "412 precondition_failed" && v >= 0:
			version = v // an earlier write whose answer was lost took effect
		default:
			if cv, ok := w.current(ctx); ok {
				version = cv
			}
		}
		fails[kind]++
		last = detail
		if w.cfg.pause > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(w.cfg.pause):
			}
		}
	}
	return lat, fails, last
}

// put sends one compare-and-swap on version (0: If-None-Match: *); on a
// 200 it returns the new version, on a 412 the current one (0 when none).
func (w casWriter) put(ctx context.Context, version, i int) (int, string, string) {
	body := fmt.Sprintf(`{"b3":"b3:%064x"}`, i)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, w.base+"/names/"+w.name, strings.NewReader(body))
	if err != nil {
		return -1, "request", err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+w.cfg.token)
	req.Header.Set("Content-Type", "application/json")
	if version == 0 {
		req.Header.Set("If-None-Match", "*")
	} else {
		req.Header.Set("If-Match", `"`+strconv.Itoa(version)+`"`)
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		return -1, transportKind(err), err.Error()
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return -1, transportKind(err), err.Error()
	}
	switch resp.StatusCode {
	case http.StatusOK:
		var rec struct {
			Version int `json:"version"`
		}
		if err := json.Unmarshal(data, &rec); err != nil || rec.Version != version+1 {
			return -1, "bad_answer", fmt.Sprintf("200 after If-Match %d: %.200s", version, data)
		}
		return rec.Version, "", ""
	case http.StatusPreconditionFailed:
		var env struct {
			Error struct {
				Details struct {
					Current *int `json:"current_version"`
				} `json:"details"`
			} `json:"error"`
		}
		cur := -1
		if json.Unmarshal(data, &env) == nil {
			cur = 0
			if env.Error.Details.Current != nil {
				cur = *env.Error.Details.Current
			}
		}
		return cur, refusalKind(resp.StatusCode, data), fmt.Sprintf("412 after If-Match %d: %.200s", version, data)
	}
	return -1, refusalKind(resp.StatusCode, data), fmt.Sprintf("%d %.300s", resp.StatusCode, data)
}

// current reads the name's live version with ?consistent=1 (0 when it
// is absent); ok false when the read failed.
func (w casWriter) current(ctx context.Context) (int, bool) {
	u := w.base + "/names/" + url.PathEscape(w.name) + "?consistent=1"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, false
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch resp.StatusCode {
	case http.StatusNotFound:
		return 0, true
	case http.StatusOK:
		var rec struct {
			Version int `json:"version"`
		}
		if json.Unmarshal(data, &rec) == nil && rec.Version > 0 {
			return rec.Version, true
		}
	}
	return 0, false
}

// percentile is the nearest-rank q-quantile of sorted d (0 when empty).
func percentile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	i := int(q*float64(len(d))+0.999999) - 1
	return d[max(0, min(i, len(d)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
