package index

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/ronhq/ron/httpx/auth"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/runtime/module"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/kv/bolt"
)

// liveRole is a started, running index role on 127.0.0.1:0.
type liveRole struct {
	*Role
	t    *testing.T
	keys *auth.Keyring
	base string
	http *http.Client
	stop func(ctx context.Context)
}

// roleTestConfig is the default config listening on a free port.
func roleTestConfig() Config {
	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	return cfg
}

// roleOptions are Options for cfg with fresh keys and metrics, in memory.
func roleOptions(t *testing.T, cfg Config) Options {
	t.Helper()
	keys, err := auth.GenerateKeyring()
	if err != nil {
		t.Fatal(err)
	}
	return Options{Config: cfg, Env: module.Env{Amnesia: true, Log: zerolog.Nop(), Metrics: runtime.NewMetrics(nil), Keys: keys, Version: "test", Ops: func(e *echo.Echo) {
		e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	}}}
}

// startLive starts a role with opt; it is stopped at the end of the test
// (or earlier by calling stop).
func startLive(t *testing.T, opt Options) *liveRole {
	t.Helper()
	r := New(opt)
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	lr := &liveRole{Role: r, t: t, keys: opt.Keys, base: "http://" + r.Addr(),
		http: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
	stopped := false
	lr.stop = func(sctx context.Context) {
		if stopped {
			return
		}
		stopped = true
		lr.http.CloseIdleConnections()
		if err := r.Stop(sctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer scancel()
		lr.stop(sctx)
	})
	return lr
}

// token mints a one-hour token with scopes.
func (lr *liveRole) token(scopes ...string) string {
	lr.t.Helper()
	tok, _, err := lr.keys.Mint(auth.MintOptions{Scopes: scopes, TTL: time.Hour})
	if err != nil {
		lr.t.Fatal(err)
	}
	return tok
}

// call sends one request (body as JSON when set) and returns status,
// headers and body.
func (lr *liveRole) call(method, path, body, token string) (int, http.Header, []byte) {
	lr.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	hr, err := http.NewRequest(method, lr.base+path, rd)
	if err != nil {
		lr.t.Fatal(err)
	}
	if body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		hr.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := lr.http.Do(hr)
	if err != nil {
		lr.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, b
}

// errorCode is error.code of an envelope body.
func errorCode(b []byte) string {
	var env struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(b, &env)
	return env.Error.Code
}

func TestRoleServesInMemory(t *testing.T) {
	lr := startLive(t, roleOptions(t, roleTestConfig()))
	if lr.Handlers() == nil || !strings.HasPrefix(lr.AdvertiseURL(), "http://127.0.0.1:") {
		t.Fatalf("handlers %v, advertise %q", lr.Handlers(), lr.AdvertiseURL())
	}
	code, _, body := lr.call("PUT", "/names/blog.example", `{"b3":"`+idA+`"}`, lr.token(indexapi.ScopeWrite))
	if code != 200 {
		t.Fatalf("PUT: %d %s", code, body)
	}
	if code, _, body := lr.call("GET", "/resolve/blog.example", "", ""); code != 200 || !strings.Contains(string(body), `"target":"`+idA) {
		t.Fatalf("resolve: %d %s", code, body)
	}
	if code, _, _ := lr.call("PUT", "/names/blog.example", `{"b3":"`+idA+`"}`, ""); code != 401 {
		t.Fatalf("write without token: %d", code)
	}
	if code, _, _ := lr.call("GET", "/healthz", "", ""); code != 200 {
		t.Fatalf("ops route: %d", code)
	}
	if rd := lr.Ready(t.Context()); !rd.Ready() {
		t.Fatalf("not ready: %+v", rd)
	}
	lr.refreshCounts(t.Context())
	d := lr.Details().(map[string]any)
	for _, k := range []string{"names", "provider_records", "peers", "peers_open", "cache_entries"} {
		if _, ok := d[k]; !ok {
			t.Errorf("details lack %s: %v", k, d)
		}
	}
	if d["names"] != int64(1) || d["peers"] != 0 {
		t.Fatalf("details %v", d)
	}
}

// TestRoleExportsMetrics checks that every docs/index.md §13 name is exported with
// role="index" once the role has started.
func TestRoleExportsMetrics(t *testing.T) {
	opt := roleOptions(t, roleTestConfig())
	startLive(t, opt)
	var all strings.Builder
	for series := range opt.Metrics.Values() {
		all.WriteString(series + "\n")
	}
	names := []string{"ron_queue_depth", "ron_queue_capacity", "ron_queue_dropped_total", "ron_busy_rejections_total",
		"ron_tasks_spawned_total", "ron_tasks_aborted_total", "ron_tasks_canceled_total", "ron_io_timeouts_total",
		"ron_backoff_retries_total", "ron_index_dht_lookup_ms_bucket", "ron_dht_hedged_requests_total",
		"ron_resolve_deadline_hit_total", "ron_index_cache_hits_total", "ron_index_cache_misses_total",
		"ron_index_cache_entries", "ron_index_cache_hit_ratio", "ron_index_names", "ron_index_provider_records",
		"ron_index_writes_total", "ron_index_janitor_pruned_total", "ron_index_rate_limited_total",
		"ron_index_auth_failures_total"}
	for _, n := range names {
		if !strings.Contains(all.String(), n+`{role="index"`) {
			t.Errorf("%s{role=\"index\"} not exported", n)
		}
	}
	for _, kind := range []string{"lookup_leg", "janitor", "probe"} {
		if !strings.Contains(all.String(), `ron_tasks_canceled_total{role="index",kind="`+kind+`"}`) {
			t.Errorf("tasks kind %s not exported", kind)
		}
	}
}

func TestRoleBoltPersists(t *testing.T) {
	dir := t.TempDir()
	opt := roleOptions(t, roleTestConfig())
	opt.Amnesia, opt.DataDir = false, dir
	lr := startLive(t, opt)
	if code, _, body := lr.call("PUT", "/names/kept.example", `{"b3":"`+idB+`"}`, lr.token(indexapi.ScopeWrite)); code != 200 {
		t.Fatalf("PUT: %d %s", code, body)
	}
	lr.stop(t.Context())
	if _, err := os.Stat(filepath.Join(dir, "index", "index.db")); err != nil {
		t.Fatal(err)
	}
	again := startLive(t, opt)
	if code, _, body := again.call("GET", "/names/kept.example", "", ""); code != 200 || !strings.Contains(string(body), idB) {
		t.Fatalf("after restart: %d %s", code, body)
	}
}

func TestRoleBoltLockedByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	held, err := bolt.Open(filepath.Join(dir, "index", "index.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	synctest.Test(t, func(t *testing.T) {
		opt := roleOptions(t, roleTestConfig())
		opt.Amnesia, opt.DataDir = false, dir
		start := time.Now()
		err := New(opt).openStore(t.Context(), opt.Config)
		if err == nil || !strings.Contains(err.Error(), "index database locked by another process") {
			t.Fatalf("got %v", err)
		}
		if time.Since(start) < openTimeout {
			t.Fatalf("gave up after %v, want the %v open timeout", time.Since(start), openTimeout)
		}
	})
}

func TestRoleReadiness(t *testing.T) {
	lr := startLive(t, roleOptions(t, roleTestConfig()))
	if err := lr.kv.Close(); err != nil { // the store fails under the role
		t.Fatal(err)
	}
	lr.probe(t.Context())
	if rd := lr.Ready(t.Context()); len(rd.Missing) != 1 || rd.Missing[0] != "index:store" {
		t.Fatalf("after a failed probe: %+v", rd)
	}
	lr.Drain()
	if rd := lr.Ready(t.Context()); len(rd.Missing) != 1 || rd.Missing[0] != "index" {
		t.Fatalf("draining: %+v", rd)
	}
	if code, _, body := lr.call("GET", "/names/a.example", "", ""); code != 503 || errorCode(body) != "draining" {
		t.Fatalf("request while draining: %d %s", code, body)
	}
}

func TestRoleApplyRejectsListen(t *testing.T) {
	lr := startLive(t, roleOptions(t, roleTestConfig()))
	cfg := *lr.Cfg.Load()
	cfg.Listen = "127.0.0.1:1"
	if err := lr.Apply(cfg); err == nil || !strings.Contains(err.Error(), "index.listen") {
		t.Fatalf("listen change: %v", err)
	}
	if err := lr.Apply("not a config"); err == nil {
		t.Fatal("a foreign config was applied")
	}
	bad := *lr.Cfg.Load()
	bad.Alpha = 0
	if err := lr.Apply(bad); err == nil || !strings.Contains(err.Error(), "index.alpha") {
		t.Fatalf("invalid config: %v", err)
	}
	ok := *lr.Cfg.Load()
	ok.PublicReads, ok.Workers, ok.CacheEntries, ok.RatelimitRPS = false, 4, 10, 100
	if err := lr.Apply(ok); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := lr.call("GET", "/names/a.example", "", ""); code != 401 {
		t.Fatalf("public_reads=false applied live: read without token got %d", code)
	}
	if code, _, _ := lr.call("GET", "/names/a.example", "", lr.token(indexapi.ScopeRead)); code != 404 {
		t.Fatalf("read with index:read: %d", code)
	}
}

// TestRolesAsPeers runs two roles in one process; B learns A as its peer
// by Apply and resolves a name set on A.
func TestRolesAsPeers(t *testing.T) {
	a := startLive(t, roleOptions(t, roleTestConfig()))
	b := startLive(t, roleOptions(t, roleTestConfig()))
	if _, err := NewLocalClient(a.Handlers()).SetName(t.Context(), "blog.example", mustParseID(t, idA), indexapi.Cond{}); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := b.call("GET", "/resolve/blog.example", "", ""); code != 404 {
		t.Fatalf("B without peers: %d", code)
	}
	cfg := *b.Cfg.Load()
	cfg.Peers = []string{a.AdvertiseURL(), b.AdvertiseURL() + "/"} // B's own URL is skipped
	if err := b.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if hp := b.peers.Load(); hp == nil || hp.Len() != 1 {
		t.Fatalf("peer source %v", hp)
	}
	code, _, body := b.call("GET", "/resolve/blog.example", "", "")
	var ans indexapi.ResolveAnswer
	if err := json.Unmarshal(body, &ans); code != 200 || err != nil || ans.Source != indexapi.SourcePeer || ans.Target != idA {
		t.Fatalf("resolve at B: %d %s", code, body)
	}
	if d := b.Details().(map[string]any); d["peers"] != 1 || d["peers_open"] != 0 {
		t.Fatalf("details %v", d)
	}
	checkPeerReads(t, a, b)
	cfg.Peers = nil
	if err := b.Apply(cfg); err != nil || b.peers.Load() != nil {
		t.Fatalf("peers removed: %v, source %v", err, b.peers.Load())
	}
}

// checkPeerReads: GET /names and GET /providers on b answer a local miss
// from peer a (docs/index.md §3, §4), but never with ?local=1; the local client
// reads the same way.
func checkPeerReads(t *testing.T, a, b *liveRole) {
	t.Helper()
	ann := []indexapi.Announcement{{ID: mustParseID(t, idB), Node: "n1", Addr: "http://10.0.0.1:5303", TTL: time.Minute, Region: "r2"},
		{ID: mustParseID(t, idB), Node: "n2", Addr: "http://10.0.0.2:5303", TTL: time.Minute, Region: "r1"}}
	if _, _, err := NewLocalClient(a.Handlers()).Announce(t.Context(), ann); err != nil {
		t.Fatal(err)
	}
	code, hd, body := b.call("GET", "/names/blog.example", "", "")
	var rec indexapi.NameRecord
	if err := json.Unmarshal(body, &rec); code != 200 || err != nil || rec.B3 != idA || hd.Get("ETag") != `"1"` {
		t.Fatalf("GET /names at B: %d %s", code, body)
	}
	if code, _, _ := b.call("GET", "/names/blog.example@1", "", ""); code != 200 {
		t.Fatalf("GET /names@1 at B: %d", code)
	}
	code, _, body = b.call("GET", "/providers/"+idB+"?region=r1&limit=1", "", "")
	var l indexapi.ProviderList
	if err := json.Unmarshal(body, &l); code != 200 || err != nil || len(l.Providers) != 1 || l.Providers[0].Node != "n2" {
		t.Fatalf("GET /providers at B (region r1 first, limit 1): %d %s", code, body)
	}
	for _, p := range []string{"/names/blog.example?local=1", "/providers/" + idB + "?local=1"} {
		if code, _, _ := b.call("GET", p, "", ""); code != 404 {
			t.Fatalf("%s at B: %d, want 404 from the local store only", p, code)
		}
	}
	if r, err := NewLocalClient(b.Handlers()).GetName(t.Context(), "blog.example"); err != nil || r.B3 != idA {
		t.Fatalf("LocalClient.GetName at B: %+v %v", r, err)
	}
}

func TestOwnAdvertiseURLSkipped(t *testing.T) {
	cfg := roleTestConfig()
	cfg.AdvertiseURL = "http://Self.Example:80/"
	cfg.Peers = []string{"http://self.example", "http://127.0.0.1:9"}
	lr := startLive(t, roleOptions(t, cfg))
	hp := lr.peers.Load()
	if hp == nil || hp.Len() != 1 || hp.peers[0].url != "http://127.0.0.1:9" {
		t.Fatalf("peer source %+v", hp)
	}
	if lr.AdvertiseURL() != cfg.AdvertiseURL {
		t.Fatalf("advertise %q", lr.AdvertiseURL())
	}
}

// TestConnCapIsTheListeners checks that max_conns_per_ip reaches the
// listener: a second connection from the same address is refused.
func TestConnCapIsTheListeners(t *testing.T) {
	cfg := roleTestConfig()
	cfg.MaxConnsPerIP = 1
	lr := startLive(t, roleOptions(t, cfg))
	if code := rawRequest(t, dial(t, lr.Addr())); code != 404 {
		t.Fatalf("first connection: %d", code)
	}
	if code := rawRequest(t, dial(t, lr.Addr())); code != 429 {
		t.Fatalf("second connection from the same address: %d, want 429", code)
	}
}

// dial opens a raw connection, closed at the end of the test.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// rawRequest sends one keep-alive GET of an unknown name on c and returns
// the status.
func rawRequest(t *testing.T, c net.Conn) int {
	t.Helper()
	if _, err := fmt.Fprintf(c, "GET /names/none.example HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func TestStopCancelsLookupsAndLeavesNoGoroutine(t *testing.T) {
	lr := startLive(t, roleOptions(t, roleTestConfig()))
	entered := make(chan struct{})
	blocked := blockingPeers{entered: entered}
	s := lr.h.settings()
	s.Peers = blocked
	lr.h.Reconfigure(s)
	got := make(chan int, 1)
	go func() {
		res, err := lr.http.Get(lr.base + "/resolve/slow.example")
		if err != nil {
			got <- 0
			return
		}
		res.Body.Close()
		got <- res.StatusCode
	}()
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the drain deadline has already passed
	lr.stop(ctx)
	<-got
	lr.http.CloseIdleConnections()
	goleak.VerifyNone(t)
}

// blockingPeers is a PeerSource whose lookups wait for their context.
type blockingPeers struct{ entered chan struct{} }

func (p blockingPeers) Name(ctx context.Context, _ string) (indexapi.NameRecord, error) {
	close(p.entered)
	<-ctx.Done()
	return indexapi.NameRecord{}, ctx.Err()
}

func (p blockingPeers) Providers(ctx context.Context, _ store.ID) (indexapi.ProviderList, error) {
	<-ctx.Done()
	return indexapi.ProviderList{}, ctx.Err()
}

func mustParseID(t *testing.T, s string) store.ID {
	t.Helper()
	id, err := store.ParseID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
