package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/runtime/config"
)

// Bounds of the writes flags.
const (
	maxObjectSize = 256 << 20
	maxObjects    = 1_000_000
	maxWorkers    = 256
	maxTimeout    = 10 * time.Minute
)

// writesConfig is the parsed writes command line.
type writesConfig struct {
	urls    []string      // storage (or gateway) base URLs, round-robin
	token   string        // bearer token with storage:write
	size    int64         // bytes per object
	n       int           // objects
	c       int           // workers
	copies  int           // required "copies" in each reply; 0 = not checked
	timeout time.Duration // per request
	seed    uint64        // makes the bodies distinct from other runs
}

// parseWrites parses the writes flags.
func parseWrites(args []string) (writesConfig, error) {
	fs := flag.NewFlagSet("writes", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cfg writesConfig
	var urls, size string
	fs.StringVar(&urls, "url", "", "comma-separated base URLs receiving POST /o (required)")
	fs.StringVar(&cfg.token, "token", "", "bearer token with storage:write (required)")
	fs.StringVar(&size, "size", "1MiB", "object size (bytes or KiB/MiB/GiB)")
	fs.IntVar(&cfg.n, "n", 100, "objects to write")
	fs.IntVar(&cfg.c, "c", 4, "concurrent writers")
	fs.IntVar(&cfg.copies, "copies", 0, "require this copies value in every reply (0: do not check)")
	fs.DurationVar(&cfg.timeout, "timeout", time.Minute, "per-request timeout")
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the object bodies")
	if err := fs.Parse(args); err != nil {
		return writesConfig{}, err
	}
	if fs.NArg() > 0 {
		return writesConfig{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if cfg.urls, err = splitURLs(urls); err != nil {
		return writesConfig{}, fmt.Errorf("-url: %w", err)
	}
	sz, err := config.ParseSize(size)
	switch {
	case err != nil:
		return writesConfig{}, fmt.Errorf("-size: %w", err)
	case sz < 16 || sz > maxObjectSize:
		return writesConfig{}, fmt.Errorf("-size %s: want 16 B–256 MiB", size)
	case cfg.token == "":
		return writesConfig{}, fmt.Errorf("-token is required")
	case cfg.n < 1 || cfg.n > maxObjects:
		return writesConfig{}, fmt.Errorf("-n %d: want 1–%d", cfg.n, maxObjects)
	case cfg.c < 1 || cfg.c > maxWorkers:
		return writesConfig{}, fmt.Errorf("-c %d: want 1–%d", cfg.c, maxWorkers)
	case cfg.copies < 0 || cfg.copies > 5:
		return writesConfig{}, fmt.Errorf("-copies %d: want 0–5", cfg.copies)
	case cfg.timeout <= 0 || cfg.timeout > maxTimeout:
		return writesConfig{}, fmt.Errorf("-timeout %s: want (0, %s]", cfg.timeout, maxTimeout)
	}
	cfg.size = int64(sz)
	return cfg, nil
}

// splitURLs parses a comma-separated list of http(s) URLs.
func splitURLs(s string) ([]string, error) {
	if s == "" {
		return nil, fmt.Errorf("at least one URL is required")
	}
	var out []string
	for _, u := range strings.Split(s, ",") {
		u = strings.TrimRight(strings.TrimSpace(u), "/")
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return nil, fmt.Errorf("%q is not an http(s) URL", u)
		}
		out = append(out, u)
	}
	return out, nil
}

// writesResult is the writes summary.
type writesResult struct {
	Count       int     `json:"count"`
	Size        int64   `json:"size"`
	Workers     int     `json:"workers"`
	Seconds     float64 `json:"seconds"`
	ObjectsPerS float64 `json:"objects_per_s"`
	MiBPerS     float64 `json:"mib_per_s"`
	P50Ms       float64 `json:"p50_ms"`
	P90Ms       float64 `json:"p90_ms"`
	P99Ms       float64 `json:"p99_ms"`
	MaxMs       float64 `json:"max_ms"`
}

// runWrites writes cfg.n objects and summarises; any failed write fails
// the run (a benchmark with errors is not reported).
func runWrites(ctx context.Context, cfg writesConfig) (writesResult, error) {
	tr := client.NewTransport(client.TransportOptions{Base: client.BaseBare, MaxIdleConnsPerHost: cfg.c, DisableCompression: true})
	defer tr.CloseIdleConnections()
	w := &writer{cfg: cfg, client: &http.Client{Transport: tr, Timeout: cfg.timeout}, base: randomBlock(cfg.seed, cfg.size)}
	start := time.Now()
	var wg sync.WaitGroup
	for range cfg.c {
		wg.Add(1)
		go func() { // a writer; ends when the list is done or ctx ends
			defer wg.Done()
			w.work(ctx)
		}()
	}
	wg.Wait()
	took := time.Since(start)
	if w.err != nil {
		return writesResult{}, w.err
	}
	if err := ctx.Err(); err != nil {
		return writesResult{}, err
	}
	return summarize(cfg, w.lat, took), nil
}

// writer is the state the workers of one run share.
type writer struct {
	cfg    writesConfig
	client *http.Client
	base   []byte // the body every object starts from
	next   atomic.Int64

	mu  sync.Mutex
	lat []time.Duration
	err error // the first failure; it stops the run
}

// work writes objects until the list is done, a write fails or ctx ends.
func (w *writer) work(ctx context.Context) {
	body := slices.Clone(w.base)
	for ctx.Err() == nil {
		i := int(w.next.Add(1)) - 1
		if i >= w.cfg.n || w.failed() {
			return
		}
		stamp(body, w.cfg.seed, uint64(i))
		t0 := time.Now()
		err := w.post(ctx, w.cfg.urls[i%len(w.cfg.urls)], body)
		w.mu.Lock()
		if err != nil && w.err == nil {
			w.err = fmt.Errorf("object %d: %w", i, err)
		}
		w.lat = append(w.lat, time.Since(t0))
		w.mu.Unlock()
	}
}

func (w *writer) failed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err != nil
}

// post sends one POST /o and checks the reply.
func (w *writer) post(ctx context.Context, base string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/o", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+w.cfg.token)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := w.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	return checkReply(resp.StatusCode, data, w.cfg.copies)
}

// checkReply accepts 200/201 with a JSON body whose copies field equals
// copies (when copies > 0).
func checkReply(status int, body []byte, copies int) error {
	if status != http.StatusCreated && status != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", status, body)
	}
	var r struct {
		CID    string `json:"cid"`
		Copies *int   `json:"copies"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.CID == "" {
		return fmt.Errorf("reply %.200q is not a write answer", body)
	}
	if copies > 0 && (r.Copies == nil || *r.Copies != copies) {
		return fmt.Errorf("reply %.200s: copies is not %d", body, copies)
	}
	return nil
}

// randomBlock is size pseudo-random bytes for seed.
func randomBlock(seed uint64, size int64) []byte {
	b := make([]byte, size)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24), 'c', 'l', 'b'})
	_, _ = r.Read(b)
	return b
}

// stamp writes seed and i into the first 16 bytes, so every object of a
// run (and of runs with other seeds) is distinct.
func stamp(body []byte, seed, i uint64) {
	binary.BigEndian.PutUint64(body[0:8], seed)
	binary.BigEndian.PutUint64(body[8:16], i)
}

// summarize computes throughput and latency percentiles.
func summarize(cfg writesConfig, lat []time.Duration, took time.Duration) writesResult {
	slices.Sort(lat)
	secs := took.Seconds()
	return writesResult{
		Count: len(lat), Size: cfg.size, Workers: cfg.c, Seconds: secs,
		ObjectsPerS: float64(len(lat)) / secs,
		MiBPerS:     float64(len(lat)) * float64(cfg.size) / (1 << 20) / secs,
		P50Ms:       ms(percentile(lat, 0.50)), P90Ms: ms(percentile(lat, 0.90)),
		P99Ms: ms(percentile(lat, 0.99)), MaxMs: ms(percentile(lat, 1)),
	}
}

// percentile is the nearest-rank q-quantile of sorted d (0 when empty).
func percentile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := int(q*float64(len(d))+0.999999) - 1
	return d[max(0, min(i, len(d)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
