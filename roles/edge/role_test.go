package edge

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ronhq/ron/roles/edge/fillq"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
	"github.com/ronhq/ron/store"
)

// TestLifecycle (docs/edge.md §9): Start mounts the packs of packs_dir, opens the disk
// cache under <data dir>/edge and is ready; status details name the packs,
// cache, queue and sources; after Stop the role is not ready.
func TestLifecycle(t *testing.T) {
	dir := packsDir(t, "pmtiles/stamen_toner_z3.pmtiles", "mbtiles/world_cities.mbtiles")
	var data string
	h := startRole(t, func(c *Config, o *Options) { c.PacksDir = dir; data = o.DataDir })
	if rd := h.r.Ready(t.Context()); !rd.Ready() {
		t.Fatalf("Ready = %+v", rd)
	}
	if fi, err := os.Stat(filepath.Join(data, "edge")); err != nil || !fi.IsDir() {
		t.Fatalf("disk cache folder: %v", err)
	}
	if h.r.Addr() == "127.0.0.1:0" || h.r.Handler() == nil || h.r.LastError() != "" {
		t.Fatalf("Addr %q, LastError %q", h.r.Addr(), h.r.LastError())
	}
	raw, err := json.Marshal(h.r.Details())
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Packs struct {
			Mounted []struct{ Name string } `json:"mounted"`
		} `json:"packs"`
		Cache struct {
			Memory   bool  `json:"memory"`
			MaxBytes int64 `json:"max_bytes"`
		} `json:"cache"`
		Queue   map[string]int `json:"queue"`
		Sources []string       `json:"sources"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Packs.Mounted) != 2 || d.Cache.Memory || d.Cache.MaxBytes != 1<<30 || d.Queue["capacity"] != 512 || len(d.Sources) != 0 {
		t.Fatalf("details %s", raw)
	}
	h.stop()
	if rd := h.r.Ready(t.Context()); rd.Ready() || !slices.Equal(rd.Missing, []string{"edge"}) {
		t.Fatalf("Ready after Stop = %+v", rd)
	}
}

// TestAmnesiaWritesNothing (docs/edge.md §8): with amnesia the cache is in memory and
// nothing appears under the data dir.
func TestAmnesiaWritesNothing(t *testing.T) {
	var data string
	h := startRole(t, func(_ *Config, o *Options) { o.Amnesia = true; data = o.DataDir })
	if ents, err := os.ReadDir(data); err != nil || len(ents) != 0 {
		t.Fatalf("data dir holds %v (%v)", ents, err)
	}
	raw, _ := json.Marshal(h.r.Details())
	if !strings.Contains(string(raw), `"memory":true`) || !strings.Contains(string(raw), `"max_bytes":268435456`) {
		t.Fatalf("details %s", raw)
	}
}

// TestReadyMissingPack (docs/edge.md §4.2, docs/edge.md §9): a pack that fails to mount is missing
// as edge:pack:<name>, unless pack_errors = "skip".
func TestReadyMissingPack(t *testing.T) {
	dir := packsDir(t, "pmtiles/stamen_toner_z3.pmtiles", "pmtiles/invalid.pmtiles")
	h := startRole(t, func(c *Config, _ *Options) { c.PacksDir = dir })
	if rd := h.r.Ready(t.Context()); !slices.Equal(rd.Missing, []string{"edge:pack:invalid"}) || rd.Ready() {
		t.Fatalf("Ready = %+v", rd)
	}
	skip := startRole(t, func(c *Config, _ *Options) { c.PacksDir = dir; c.PackErrors = "skip" })
	if rd := skip.r.Ready(t.Context()); !rd.Ready() {
		t.Fatalf("Ready with skip = %+v", rd)
	}
}

// TestReadyFillQueueDegraded (docs/edge.md §9): edge:fill_queue is degraded while the
// work queue is ≥ 80 % full, until it is below 50 %.
func TestReadyFillQueueDegraded(t *testing.T) {
	h := startRole(t, func(c *Config, _ *Options) { c.FillWorkers, c.FillQueueCap = 1, 1 })
	release, running := make(chan struct{}), make(chan struct{}, 2)
	job := fillq.Job{Run: func(context.Context) { running <- struct{}{}; <-release }}
	if err := h.r.queue.Submit(job); err != nil {
		t.Fatal(err)
	}
	<-running // the worker holds the first job; the next one waits in the queue
	if err := h.r.queue.Submit(job); err != nil {
		t.Fatal(err)
	}
	if rd := h.r.Ready(t.Context()); !slices.Equal(rd.Degraded, []string{"edge:fill_queue"}) || len(rd.Missing) != 0 {
		t.Fatalf("Ready with a full queue = %+v", rd)
	}
	close(release)
	<-running // the queued job was taken: the queue is empty
	if rd := h.r.Ready(t.Context()); !rd.Ready() {
		t.Fatalf("Ready with an empty queue = %+v", rd)
	}
}

// TestDrainAndStopAbortFill (docs/edge.md §9): after Drain a new fill answers 503
// draining and readiness is false; a fill still running at the drain
// deadline is aborted and counted in ron_tasks_aborted_total{kind="fill"}.
func TestDrainAndStopAbortFill(t *testing.T) {
	running, other := []byte("a fill that never ends"), []byte("asked after Drain")
	st := newFakeStorage(running, other)
	st.block = true
	h := startRole(t, func(_ *Config, o *Options) { o.Local.Storage = st.handler })
	answered := make(chan int, 1)
	go func() { // the client of the running fill: an error status, or a dropped answer (0)
		ctx, cancel := context.WithTimeout(context.Background(), testWait)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://edge.test/o/"+store.Sum(running).String(), nil)
		resp, err := h.client.Do(req)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	<-st.started
	h.r.Drain()
	if rd := h.r.Ready(t.Context()); !slices.Equal(rd.Missing, []string{"edge"}) {
		t.Fatalf("Ready after Drain = %+v", rd)
	}
	resp, body := h.get(t, http.MethodGet, "/o/"+store.Sum(other).String())
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, `"draining"`) {
		t.Fatalf("fill after Drain: %d %s", resp.StatusCode, body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the drain deadline has passed
	if err := h.r.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if code := <-answered; code != 0 && code < 500 {
		t.Fatalf("the aborted fill's client got %d", code)
	}
	if n := counter(h.m, "tasks_aborted_total", "kind", "fill"); n != 1 {
		t.Fatalf("ron_tasks_aborted_total{kind=fill} = %d, want 1", n)
	}
}

// TestApplyLiveAndRestartKeys (docs/edge.md §10): the not-live keys are refused by name
// and nothing changes; everything else applies at once.
func TestApplyLiveAndRestartKeys(t *testing.T) {
	dir := packsDir(t, "pmtiles/stamen_toner_z3.pmtiles")
	var cfg Config
	h := startRole(t, func(c *Config, _ *Options) { c.PacksDir = dir; cfg = *c })
	for _, row := range []struct {
		key    string
		change func(*Config)
	}{
		{"edge.listen", func(c *Config) { c.Listen = "127.0.0.1:1" }},
		{"edge.storage_url", func(c *Config) { c.StorageURL = "http://127.0.0.1:1" }},
		{"edge.index_url", func(c *Config) { c.IndexURL = "http://127.0.0.1:1" }},
		{"edge.fill_workers", func(c *Config) { c.FillWorkers = 2 }},
		{"edge.fill_queue_cap", func(c *Config) { c.FillQueueCap = 2 }},
	} {
		n := cfg
		row.change(&n)
		n.TilesCacheControl = "no-store" // would show if anything applied
		if err := h.r.Apply(n); err == nil || !strings.Contains(err.Error(), row.key) {
			t.Errorf("%s: Apply = %v", row.key, err)
		}
	}
	if err := h.r.Apply("not a config"); err == nil {
		t.Error("Apply of another type accepted")
	}
	bad := cfg
	bad.VerifyPacks = "never"
	if err := h.r.CheckApply(bad); err == nil || !strings.Contains(err.Error(), "verify_packs") {
		t.Errorf("CheckApply of an invalid config = %v", err)
	}
	resp, _ := h.get(t, http.MethodGet, "/tiles/stamen_toner_z3/0/0/0.png")
	if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=60" {
		t.Fatalf("Cache-Control before Apply %q", cc)
	}
	n := cfg
	n.TilesCacheControl, n.CORSOrigins, n.CacheMaxBytes, n.RPS = "public, max-age=5", []string{"https://app.example"}, 1<<20, 1000
	if err := h.r.Apply(n); err != nil {
		t.Fatal(err)
	}
	resp, _ = h.get(t, http.MethodGet, "/tiles/stamen_toner_z3/0/0/0.png", "Origin", "https://app.example")
	if resp.Header.Get("Cache-Control") != "public, max-age=5" || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Fatalf("after Apply: %v", resp.Header)
	}
	raw, _ := json.Marshal(h.r.Details())
	if !strings.Contains(string(raw), `"max_bytes":1048576`) || h.r.Server().Limits().RPS != 1000 {
		t.Fatalf("details after Apply %s", raw)
	}
}

// TestStartFailures: a config error, a cache that cannot open (docs/edge.md §9: fatal),
// a packs_dir that cannot be listed and a taken listener fail Start.
func TestStartFailures(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	taken := startRole(t, nil)
	for _, row := range []struct {
		name   string
		mutate func(*Config, *Options)
		want   string
	}{
		{"invalid config", func(c *Config, _ *Options) { c.PackErrors = "maybe" }, "pack_errors"},
		{"storage_url with co-located storage", func(c *Config, o *Options) {
			c.StorageURL = "http://10.0.0.2:5303"
			o.Local.Storage = newFakeStorage().handler
		}, "one source of truth"},
		{"cache", func(_ *Config, o *Options) { o.DataDir = file }, "cache"},
		{"packs_dir", func(c *Config, _ *Options) { c.PacksDir = filepath.Join(file, "packs") }, "packs"},
		{"listener", func(c *Config, _ *Options) { c.Listen = taken.r.Addr() }, "listen"},
	} {
		t.Run(row.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Listen = "127.0.0.1:0"
			opt := Options{Env: module.Env{DataDir: t.TempDir(), Metrics: runtime.NewMetrics(nil)}}
			row.mutate(&cfg, &opt)
			opt.Config = cfg
			r := New(opt)
			err := r.Start(t.Context())
			if err == nil || !strings.Contains(err.Error(), row.want) {
				t.Fatalf("Start = %v, want an error mentioning %q", err, row.want)
			}
			if r.Handler() != nil {
				t.Fatal("a failed role has a handler")
			}
			r.Tasks.Stop(t.Context())
		})
	}
}
